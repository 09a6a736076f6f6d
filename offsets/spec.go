package offsets

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind is what a Spec resets to.
type Kind string

// The kinds of Spec, as written before the colon.
const (
	Earliest  Kind = "earliest"
	Latest    Kind = "latest"
	Timestamp Kind = "timestamp"
	Shift     Kind = "shift"
	Offset    Kind = "offset"
	Group     Kind = "group"
)

// Spec says where a reset moves a group, in one of the forms ParseSpec
// reads: earliest, latest, timestamp:<RFC 3339>, shift:<±N>, offset:<N>
// (one partition) or group:<other group>.
type Spec struct {
	Kind Kind
	// Time is the timestamp of a Timestamp spec.
	Time time.Time
	// N is the shift of a Shift spec or the offset of an Offset spec.
	N int64
	// Group is the group an Group spec copies from.
	Group string
}

// ErrSpec is wrapped by every error ParseSpec returns.
var ErrSpec = errors.New("invalid reset spec")

const specForms = "earliest, latest, timestamp:<RFC 3339>, shift:<±N>, offset:<N> or group:<other group>"

// ParseSpec reads a spec: earliest, latest, timestamp:2026-12-05T09:00:00Z,
// shift:-100, shift:+5, offset:42 or group:orders-v1.
func ParseSpec(s string) (Spec, error) {
	kind, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	sp := Spec{Kind: Kind(kind)}
	switch sp.Kind {
	case Earliest, Latest:
		if hasArg {
			return Spec{}, fmt.Errorf("%w %q: %s takes no argument", ErrSpec, s, kind)
		}
		return sp, nil
	case Timestamp:
		t, err := time.Parse(time.RFC3339Nano, arg)
		if err != nil {
			return Spec{}, fmt.Errorf("%w %q: want an RFC 3339 time like timestamp:2026-12-05T09:00:00Z", ErrSpec, s)
		}
		sp.Time = t
		return sp, nil
	case Shift:
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || n == 0 {
			return Spec{}, fmt.Errorf("%w %q: want a non-zero number of records like shift:-100 or shift:+5", ErrSpec, s)
		}
		sp.N = n
		return sp, nil
	case Offset:
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || n < 0 || strings.HasPrefix(arg, "+") {
			return Spec{}, fmt.Errorf("%w %q: want an offset like offset:42", ErrSpec, s)
		}
		sp.N = n
		return sp, nil
	case Group:
		if arg == "" {
			return Spec{}, fmt.Errorf("%w %q: want the group to copy from, like group:orders-v1", ErrSpec, s)
		}
		sp.Group = arg
		return sp, nil
	}
	return Spec{}, fmt.Errorf("%w %q: want %s", ErrSpec, s, specForms)
}

// String is the spec as ParseSpec reads it.
func (s Spec) String() string {
	switch s.Kind {
	case Timestamp:
		return "timestamp:" + s.Time.Format(time.RFC3339Nano)
	case Shift:
		return fmt.Sprintf("shift:%+d", s.N)
	case Offset:
		return "offset:" + strconv.FormatInt(s.N, 10)
	case Group:
		return "group:" + s.Group
	}
	return string(s.Kind)
}

// MarshalText writes the spec as String does, so a plan file reads "to":
// "shift:-100".
func (s Spec) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the spec with ParseSpec.
func (s *Spec) UnmarshalText(b []byte) error {
	sp, err := ParseSpec(string(b))
	if err != nil {
		return err
	}
	*s = sp
	return nil
}

// TopicScope limits a plan to one topic, and to some of its partitions
// when Partitions is not empty.
type TopicScope struct {
	Topic      string
	Partitions []int32
}

// ParseTopicScope reads T or T:P[,P…], the form of --topic (Kafka's
// kafka-consumer-groups reads the same).
func ParseTopicScope(s string) (TopicScope, error) {
	// A Kafka topic name cannot hold ':', so the first one separates the
	// partitions.
	topic, parts, hasParts := strings.Cut(s, ":")
	if topic == "" {
		return TopicScope{}, fmt.Errorf("topic %q: want T or T:P[,P…]", s)
	}
	ts := TopicScope{Topic: topic}
	if !hasParts {
		return ts, nil
	}
	for p := range strings.SplitSeq(parts, ",") {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil || n < 0 {
			return TopicScope{}, fmt.Errorf("topic %q: partition %q is not a partition number", s, p)
		}
		ts.Partitions = append(ts.Partitions, int32(n))
	}
	return ts, nil
}

// String is the scope as ParseTopicScope reads it.
func (t TopicScope) String() string {
	if len(t.Partitions) == 0 {
		return t.Topic
	}
	ps := make([]string, len(t.Partitions))
	for i, p := range t.Partitions {
		ps[i] = strconv.Itoa(int(p))
	}
	return t.Topic + ":" + strings.Join(ps, ",")
}

// MarshalText writes the scope as String does.
func (t TopicScope) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads the scope with ParseTopicScope.
func (t *TopicScope) UnmarshalText(b []byte) error {
	ts, err := ParseTopicScope(string(b))
	if err != nil {
		return err
	}
	*t = ts
	return nil
}
