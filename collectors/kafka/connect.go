package kafka

import (
	"context"

	"github.com/queuewatch/queuewatch/queue"
)

// readConnects reads the connectors of every Kafka Connect cluster of the
// cluster, one request each (brokerkafka.Connect.Connectors), in config
// order. A Connect cluster that does not answer is listed in partial, and
// its connectors of the last good read are kept with the error, so they
// show it rather than vanish (and their stop alerts hold).
func (s *Source) readConnects(ctx context.Context) (connectors []queue.Connector, partial []string) {
	connects := s.opts.Cluster.Connects()
	if len(connects) == 0 {
		return nil, nil
	}
	if s.connectors == nil {
		s.connectors = make(map[string][]queue.Connector, len(connects))
	}
	for _, c := range connects {
		read, err := c.Connectors(ctx, s.name)
		if err != nil {
			partial = append(partial, err.Error())
			for _, last := range s.connectors[c.Name()] {
				last.Err = err.Error()
				connectors = append(connectors, last)
			}
			continue
		}
		s.connectors[c.Name()] = read
		connectors = append(connectors, read...)
	}
	return connectors, partial
}

// linkConnectorGroups gives each sink of snap the lag of its consumer
// group, when the poll read that group.
func linkConnectorGroups(snap *queue.Snapshot) {
	for i := range snap.Connectors {
		c := &snap.Connectors[i]
		if g, ok := snap.Group(c.Group); ok && c.Group != "" && g.Err == "" {
			c.Lag, c.LagKnown = g.TotalLag(), true
		}
	}
}
