package offsets

import "github.com/prometheus/client_golang/prometheus"

// Metrics counts applies in queuewatch_offset_resets_total{cluster,group,result}.
type Metrics struct {
	resets *prometheus.CounterVec
}

// NewMetrics registers the counter with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{resets: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "queuewatch_offset_resets_total",
		Help: "Offset reset applies by result: ok, partial, failed, refused (the group has members, or the plan was modified) or stale (re-plan).",
	}, []string{"cluster", "group", "result"})}
	if err := reg.Register(m.resets); err != nil {
		return nil, err
	}
	return m, nil
}

// count adds one apply; a nil Metrics counts nothing.
func (m *Metrics) count(r Receipt) {
	if m == nil {
		return
	}
	m.resets.WithLabelValues(r.Cluster, r.Group, string(r.Result)).Inc()
}

// Resets is the counter of one cluster, group and result, for tests.
func (m *Metrics) Resets(cluster, group string, r Result) prometheus.Counter {
	return m.resets.WithLabelValues(cluster, group, string(r))
}
