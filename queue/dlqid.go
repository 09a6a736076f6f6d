package queue

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Replay headers: every message queuewatch republishes from a DLQ carries
// both, on every broker, so consumers can stay idempotent and poison
// messages can be recognised.
const (
	// HeaderReplayCount is how many times the message has been replayed
	// (1 on the first replay).
	HeaderReplayCount = "x-queuewatch-replay-count"
	// HeaderReplayID names the job and the message's place in it,
	// "<job id>.<n>"; it is unique per published copy.
	HeaderReplayID = "x-queuewatch-replay-id"
)

// FormatReplayCount is the one encoding of HeaderReplayCount, written on
// every broker: decimal text ("2"). RabbitMQ copies made before issue 21
// carried an AMQP long-long instead; ParseReplayCount reads both.
func FormatReplayCount(n int64) string { return strconv.FormatInt(n, 10) }

// ParseReplayCount reads a HeaderReplayCount value as a Message holds it:
// decimal text, which is also how a RabbitMQ decoder renders the integer
// header older versions wrote. It is 0 when malformed or negative.
func ParseReplayCount(v []byte) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// ReplayCount is how many times queuewatch already replayed the message,
// from its HeaderReplayCount (ParseReplayCount; 0 when absent or
// malformed). A replay's copy carries ReplayCount()+1.
func (m *Message) ReplayCount() int64 {
	v, ok := m.Header(HeaderReplayCount)
	if !ok {
		return 0
	}
	return ParseReplayCount(v)
}

// ErrBadDLQID is wrapped by ParseDLQID's errors.
var ErrBadDLQID = errors.New("bad dlq id")

// ErrNotFound is matched by broker errors saying that what a DLQ ID names
// (its vhost, queue or topic) does not exist, so that callers above the
// broker packages (the web API: 404) can tell it from a broker failure.
var ErrNotFound = errors.New("not found")

// DLQRef names one DLQ: the parsed form of a DLQ ID.
type DLQRef struct {
	Broker  Broker
	Cluster string
	VHost   string // empty but for RabbitMQ
	Name    string
}

// Ref is the DLQ's reference.
func (d *DLQ) Ref() DLQRef {
	return DLQRef{Broker: d.Broker, Cluster: d.Cluster, VHost: d.VHost, Name: d.Name}
}

// ID is the DLQ's identifier in URLs, the API, the CLI and the audit log,
// in the one object-ID format (objectID). For example vhost "a:b" and
// queue "q:1" give "rabbitmq:main:a%3Ab:q:1". A caller putting an ID in a
// URL path escapes it as one segment.
func (r DLQRef) ID() string { return objectID(r.Broker, r.Cluster, r.VHost, r.Name) }

// objectID is the one format of an object's ID, a DLQ's or a reader's, as
// URLs, the audit log and scope patterns (auth grants) read it:
// "broker:cluster:scope:name". Cluster names never hold ':' (config
// rejects them); the scope (a vhost, a stream) has '%' and ':'
// percent-escaped, so a vhost named "team-b:team-a.x" cannot read as team
// A's; the name comes last and is kept as it is, so any name round-trips.
func objectID(b Broker, cluster, scope, name string) string {
	return string(b) + ":" + cluster + ":" + escapeVHost(scope) + ":" + name
}

// String is the ID.
func (r DLQRef) String() string { return r.ID() }

// ID is the DLQ's identifier; see DLQRef.ID.
func (d *DLQ) ID() string { return d.Ref().ID() }

// ParseDLQID parses an ID made by DLQRef.ID. It checks the form, not that
// the cluster or queue exists.
func ParseDLQID(id string) (DLQRef, error) {
	p := strings.SplitN(id, ":", 4)
	if len(p) != 4 || p[1] == "" || p[3] == "" {
		return DLQRef{}, fmt.Errorf("dlq id %q: want broker:cluster:vhost:name: %w", id, ErrBadDLQID)
	}
	vhost, ok := unescapeVHost(p[2])
	if !ok {
		return DLQRef{}, fmt.Errorf("dlq id %q: malformed escape in vhost: %w", id, ErrBadDLQID)
	}
	r := DLQRef{Broker: Broker(p[0]), Cluster: p[1], VHost: vhost, Name: p[3]}
	switch r.Broker {
	case RabbitMQ:
		if r.VHost == "" {
			return DLQRef{}, fmt.Errorf("dlq id %q: rabbitmq needs a vhost: %w", id, ErrBadDLQID)
		}
	// "pubsub": Google Cloud Pub/Sub's replay backend (dlqreplay/pubsub)
	// came before its queue.Broker constant, which needs the broker's
	// registration in app; PubSub takes this place once it has one.
	case Kafka, NATS, SQS, "pubsub":
		if r.VHost != "" {
			return DLQRef{}, fmt.Errorf("dlq id %q: %s has no vhost: %w", id, r.Broker, ErrBadDLQID)
		}
	default:
		return DLQRef{}, fmt.Errorf("dlq id %q: unknown broker %q: %w", id, p[0], ErrBadDLQID)
	}
	return r, nil
}

var vhostEscaper = strings.NewReplacer("%", "%25", ":", "%3A")

func escapeVHost(v string) string { return vhostEscaper.Replace(v) }

// unescapeVHost undoes escapeVHost; only %25 and %3A (any case) are
// accepted, so an ID has exactly one spelling.
func unescapeVHost(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		switch strings.ToUpper(s[i+1 : i+3]) {
		case "25":
			b.WriteByte('%')
		case "3A":
			b.WriteByte(':')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}
