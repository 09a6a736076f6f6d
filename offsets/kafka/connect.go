package kafka

import (
	"context"
	"errors"
	"fmt"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
)

var _ offsets.ConnectRestarter = (*Resets)(nil)

// RestartConnector restarts connector and its failed tasks on the Connect
// cluster named connect in the cluster's config.
func (r *Resets) RestartConnector(ctx context.Context, connect, connector string) (offsets.RestartState, error) {
	for _, c := range r.kc.Connects() {
		if c.Name() != connect {
			continue
		}
		st, err := c.RestartFailed(ctx, connector)
		if errors.Is(err, brokerkafka.ErrNoConnector) {
			err = fmt.Errorf("%w: %w", queue.ErrNotFound, err)
		}
		return offsets.RestartState{Restarted: st.Restarted, State: st.State, Tasks: st.Tasks}, err
	}
	return offsets.RestartState{}, fmt.Errorf("%w: kafka %s has no Connect cluster %q", queue.ErrNotFound, r.kc.Name(), connect)
}
