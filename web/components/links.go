package components

import "github.com/queuewatch/queuewatch/queue"

// Links are a page's ways across: the DLQs a reader's messages die in,
// and its Grafana dashboard. The handler builds them from the principal's
// view, so they never name what the viewer may not see.
type Links struct {
	// DLQs are the DLQs whose sources the reader reads; ShowDLQs is
	// false for a reader whose dead letters no DLQ holds (a share group's
	// are archived by the broker), so the line says nothing of them.
	DLQs     []queue.DLQ
	ShowDLQs bool
	// Grafana is the dashboard's address with the reader's variables set;
	// "" when grafana_url is not configured.
	Grafana string
}
