package nats

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// captureDown is the text of ErrCaptureDown, with which every
// CaptureError, and so a poll's Snapshot.Partial entry for it, begins.
const captureDown = "dead-letter capture cannot do its work"

// ErrCaptureDown is the error of a cluster whose dead-letter capture
// cannot run, or whose advisory stream may drop advisories: dead letters
// are being lost, or will be, while everything else looks healthy.
var ErrCaptureDown = errors.New(captureDown)

// IsCaptureDown reports whether partial, an entry of a poll's
// Snapshot.Partial, is the cluster's CaptureError: a snapshot only keeps
// text, and check fails for this entry but not for the others.
func IsCaptureDown(partial string) bool {
	return strings.HasPrefix(partial, captureDown+": ")
}

// captureHealth is what the running capture last found: the error of its
// last start that failed, nil once a start got as far as fetching.
type captureHealth struct {
	mu  sync.Mutex
	err error
}

func (c *Cluster) setCaptureErr(err error) {
	c.health.mu.Lock()
	defer c.health.mu.Unlock()
	c.health.err = err
}

// CaptureError is nil when capture is off or can do its work, and
// otherwise says why not, wrapping ErrCaptureDown. streams is a listing
// of every stream of the account (a poll makes one anyway), from which
// it finds, without any request or the capture running (as in check):
//   - a stream of someone else's that takes the subjects of a capture
//     stream that does not exist, so capture cannot create it (another
//     queuewatch configured with another dead_letters.stream, say);
//   - a limit on the advisory stream (max_msgs, max_bytes, max_age,
//     max_msgs_per_subject): past it the server drops advisories, and
//     their dead letters are never captured, while queuewatch is down or
//     falls behind.
//
// In a process that runs the capture it also reports why its last start
// failed, until a start succeeds. A start that could not connect is not
// one: the poll reports the server down, and the error would outlive the
// outage until capture's next try.
func (c *Cluster) CaptureError(streams []*jetstream.StreamInfo) error {
	if !c.cfg.DeadLetters.Capture {
		return nil
	}
	var problems []string
	exists := map[string]bool{}
	for _, si := range streams {
		exists[si.Config.Name] = true
	}
	want := map[string][]string{
		c.DeadLetterStream(): {c.DeadLetterStream() + ".>"},
		c.AdvisoryStream():   {AdvisoryMaxDeliveries + ".>", AdvisoryTerminated + ".>"},
	}
	for _, name := range []string{c.AdvisoryStream(), c.DeadLetterStream()} {
		if exists[name] {
			continue
		}
		for _, si := range streams {
			if s, ok := overlapping(si.Config.Subjects, want[name]); ok {
				problems = append(problems, fmt.Sprintf("stream %s takes subject %s, so capture cannot create %s", si.Config.Name, s, name))
			}
		}
	}
	for _, si := range streams {
		if si.Config.Name == c.AdvisoryStream() {
			if l := advisoryLimits(si.Config); l != "" {
				problems = append(problems, fmt.Sprintf("stream %s has %s: past it the server drops advisories, and their dead letters are never captured (remove the limit)", si.Config.Name, l))
			}
		}
	}
	c.health.mu.Lock()
	if c.health.err != nil {
		problems = append(problems, "its last start failed: "+c.health.err.Error())
	}
	c.health.mu.Unlock()
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrCaptureDown, strings.Join(problems, "; "))
}

// overlapping returns the first of subjects that some subject of want
// matches too.
func overlapping(subjects, want []string) (string, bool) {
	for _, s := range subjects {
		for _, w := range want {
			if subjectsOverlap(s, w) {
				return s, true
			}
		}
	}
	return "", false
}

// subjectsOverlap reports whether some subject matches both filters ('*'
// one token, '>' one token or more).
func subjectsOverlap(a, b string) bool {
	at, bt := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(at) && i < len(bt); i++ {
		switch {
		case at[i] == ">" || bt[i] == ">":
			return true
		case at[i] != "*" && bt[i] != "*" && at[i] != bt[i]:
			return false
		}
	}
	return len(at) == len(bt)
}

// advisoryLimits names the limits set on an advisory stream, "" when
// none.
func advisoryLimits(cfg jetstream.StreamConfig) string {
	var out []string
	if cfg.MaxMsgs > 0 {
		out = append(out, fmt.Sprintf("max_msgs %d", cfg.MaxMsgs))
	}
	if cfg.MaxBytes > 0 {
		out = append(out, fmt.Sprintf("max_bytes %d", cfg.MaxBytes))
	}
	if cfg.MaxAge > 0 {
		out = append(out, fmt.Sprintf("max_age %s", cfg.MaxAge))
	}
	if cfg.MaxMsgsPerSubject > 0 {
		out = append(out, fmt.Sprintf("max_msgs_per_subject %d", cfg.MaxMsgsPerSubject))
	}
	return strings.Join(out, ", ")
}
