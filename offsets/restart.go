package offsets

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// ConnectorGroup is how the reset log names a Kafka Connect connector:
// "connect/connector", a scope and a name as for a JetStream consumer.
func ConnectorGroup(connect, connector string) string { return connect + "/" + connector }

// restartEntry is what the reset log keeps of a connector restart.
type restartEntry struct {
	Action string       `json:"action"` // "restart"
	State  RestartState `json:"state"`
	Error  string       `json:"error,omitempty"`
}

// RestartConnector restarts connector of the Connect cluster connect that
// works on Kafka cluster cluster, and its failed tasks, as who; the
// restart is recorded in the reset log, failures included, with result
// "restarted", "nothing to restart" or "failed". A restart that took
// effect but was not recorded returns its state with ErrAudit.
func (s *Service) RestartConnector(ctx context.Context, cluster, connect, connector, who string) (RestartState, error) {
	b, err := Pick(s.all, "kafka", "", cluster)
	if err != nil {
		return RestartState{}, err
	}
	r, ok := b.(ConnectRestarter)
	if !ok {
		return RestartState{}, fmt.Errorf("%w: %s has no Kafka Connect", ErrUnsupported, cluster)
	}
	at := time.Now().UTC()
	st, err := r.RestartConnector(ctx, connect, connector)
	e := restartEntry{Action: "restart", State: st}
	rec := Record{At: at, Who: who, Broker: b.Broker(), Cluster: cluster, Group: ConnectorGroup(connect, connector), Result: "restarted"}
	switch {
	case err != nil:
		e.Error, rec.Result = err.Error(), "failed"
	case !st.Restarted:
		rec.Result = "nothing to restart"
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	aerr := s.record(actx, rec, e)
	switch {
	case aerr == nil:
		return st, err
	case err != nil:
		return st, fmt.Errorf("%w (and the failure was not recorded: %v)", err, aerr) //nolint:errorlint // only err is meant to match
	}
	return st, fmt.Errorf("%w: the restart took effect but was not recorded: %w", ErrAudit, aerr)
}

// record appends r with entry e to the reset log.
func (s *Service) record(ctx context.Context, r Record, e any) error {
	entry, err := json.Marshal(e)
	if err != nil {
		return err
	}
	r.Entry = entry
	_, err = s.store.Record(ctx, r)
	return err
}
