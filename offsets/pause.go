package offsets

import (
	"context"
	"fmt"
	"time"
)

// pauseKeep is how long the store keeps a pause made through the Service
// for the consumer pages: far longer than any poll interval, so every
// snapshot polled since has seen it.
const pauseKeep = 24 * time.Hour

// Pause pauses group of brokerName's cluster until until, as who; the
// pause is recorded in the store beside the resets.
func (s *Service) Pause(ctx context.Context, brokerName, cluster, group string, until time.Time, who string) (PauseState, error) {
	return s.pause(ctx, brokerName, cluster, group, who, "pause", func(p Pauser) (PauseState, error) {
		return p.Pause(ctx, group, until)
	})
}

// Resume resumes group of brokerName's cluster at once, as who; recorded.
func (s *Service) Resume(ctx context.Context, brokerName, cluster, group, who string) (PauseState, error) {
	return s.pause(ctx, brokerName, cluster, group, who, "resume", func(p Pauser) (PauseState, error) {
		return p.Resume(ctx, group)
	})
}

// RecentPause returns the last pause or resume of group of brokerName's
// cluster made through any replica sharing the store, when it was made
// after polled (a snapshot polled at or after it shows it already).
func (s *Service) RecentPause(ctx context.Context, brokerName, cluster, group string, polled time.Time) (PauseState, bool, error) {
	p, ok, err := s.store.Pause(ctx, brokerName, cluster, group)
	if err != nil || !ok || !polled.Before(p.At) {
		return PauseState{}, false, err
	}
	return PauseState{Paused: p.Paused, Until: p.Until}, true, nil
}

// pauseEntry is what the reset log keeps of a pause or resume.
type pauseEntry struct {
	Action string     `json:"action"`
	State  PauseState `json:"state"`
	Error  string     `json:"error,omitempty"`
}

// pause runs a pause or resume on a broker that has them and records it,
// failures included, with result "paused", "resumed" or "failed". One that
// took effect is also kept for the consumer pages (RecentPause); when the
// store takes neither, ErrAudit says it took effect all the same.
func (s *Service) pause(ctx context.Context, brokerName, cluster, group, who, action string,
	do func(Pauser) (PauseState, error),
) (PauseState, error) {
	b, err := Pick(s.all, brokerName, "", cluster)
	if err != nil {
		return PauseState{}, err
	}
	p, ok := b.(Pauser)
	if !ok {
		return PauseState{}, fmt.Errorf("%w: %s readers cannot be paused", ErrUnsupported, b.Broker())
	}
	at := time.Now().UTC()
	st, err := do(p)
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var kerr error
	if err == nil {
		// Kept for every replica's consumer page until a poll shows it;
		// made at this instant, after the broker took it.
		kerr = s.store.PutPause(actx, KeptPause{
			Broker: b.Broker(), Cluster: cluster, Group: group, Paused: st.Paused, Until: st.Until, At: time.Now(),
		}, pauseKeep)
	}
	aerr := s.recordPause(actx, Record{At: at, Who: who, Broker: b.Broker(), Cluster: cluster, Group: group},
		pauseEntry{Action: action, State: st}, err)
	switch {
	case aerr == nil && kerr != nil:
		return st, fmt.Errorf("%w: the %s took effect but the consumer pages show it only after the next poll: %w", ErrAudit, action, kerr)
	case aerr == nil:
		return st, err
	case err != nil:
		// The action's error is the answer; ErrAudit would say it ran.
		return st, fmt.Errorf("%w (and the failure was not recorded: %v)", err, aerr) //nolint:errorlint // only err is meant to match
	}
	return st, fmt.Errorf("%w: the %s took effect but was not recorded: %w", ErrAudit, action, aerr)
}

// recordPause records the pause or resume e, failed with err when it is
// not nil, in r.
func (s *Service) recordPause(ctx context.Context, r Record, e pauseEntry, err error) error {
	r.Result = e.Action + "d"
	if err != nil {
		e.Error, r.Result = err.Error(), "failed"
	}
	return s.record(ctx, r, e)
}
