package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// This file is the SQS broker's own web section: its overview tab, its
// queue page and their API.

// sqsRows are the SQS queues of a snapshot as overview rows, each linked
// to the DLQ its redrive policy names and, when it is one, to its own DLQ
// page. snap is the queue's own poll, so its DLQs are of the queue's
// broker.
func sqsRows(snap *queue.Snapshot) []components.SQSRow {
	if len(snap.SQSQueues) == 0 {
		return nil
	}
	dlqs := map[string]string{}
	for i := range snap.DLQs {
		dlqs[snap.DLQs[i].Name] = components.DLQURL(snap.DLQs[i].ID())
	}
	out := make([]components.SQSRow, 0, len(snap.SQSQueues))
	for i := range snap.SQSQueues {
		q := &snap.SQSQueues[i]
		out = append(out, components.SQSRow{
			Q: q, Status: q.EffectiveStatus(), DLQURL: dlqs[q.Name], DeadLetterURL: dlqs[q.DeadLetterQueue],
		})
	}
	return out
}

// sqsSorts are the SQS table's sortable columns. Status sorts by harm,
// severity then visible messages, as groups do.
var sqsSorts = map[string]sortFunc[components.SQSRow]{
	"name":    func(a, b components.SQSRow) int { return strings.Compare(a.Q.Name, b.Q.Name) },
	"cluster": func(a, b components.SQSRow) int { return strings.Compare(a.Q.Cluster, b.Q.Cluster) },
	"status": func(a, b components.SQSRow) int {
		if c := a.Status.Severity() - b.Status.Severity(); c != 0 {
			return c
		}
		return cmpInt(a.Q.Visible, b.Q.Visible)
	},
	"visible":  func(a, b components.SQSRow) int { return cmpInt(a.Q.Visible, b.Q.Visible) },
	"inflight": func(a, b components.SQSRow) int { return cmpInt(a.Q.InFlight, b.Q.InFlight) },
	"delayed":  func(a, b components.SQSRow) int { return cmpInt(a.Q.Delayed, b.Q.Delayed) },
	"oldest":   func(a, b components.SQSRow) int { return cmpInt(int64(a.Q.OldestAge), int64(b.Q.OldestAge)) },
}

func compareSQSNames(a, b components.SQSRow) int {
	return strings.Compare(a.Q.Cluster+"\x00"+a.Q.Name, b.Q.Cluster+"\x00"+b.Q.Name)
}

// sqsTab fills the overview's SQS tab with the requested page of rows.
func (s *Server) sqsTab(c echo.Context, d *components.OverviewData, rows []components.SQSRow) {
	d.Table = tableState(c, "/", components.TabSQS, sqsSorts, "status")
	rows = filterRows(rows, d.Table.Q, func(r components.SQSRow) []string {
		return []string{r.Q.Name, r.Q.Cluster, string(r.Status), r.Q.DeadLetterQueue}
	})
	sortRows(rows, sqsSorts[d.Table.Sort], d.Table.Dir, compareSQSNames)
	d.SQS = page(&d.Table, rows)
	for i := range d.SQS {
		d.SQS[i].Trend = s.readerSpark(s.mon(c), d.SQS[i].Q.Reader(), "visible messages")
	}
}

// sqsQueuePage is /sqs/{cluster}/queues/{queue}.
func (s *Server) sqsQueuePage(c echo.Context) error {
	snap, q, err := s.sqsQueueParam(c)
	if err != nil {
		return err
	}
	d := components.SQSQueueData{
		Chrome: s.chrome(c, q.Name, "overview"), Queue: q, Status: q.EffectiveStatus(),
		HistoryURL: sqsHistoryURL(q), Range: chartRange(c), SourcePages: map[string]string{},
	}
	for i := range snap.DLQs {
		switch dl := snap.DLQs[i]; {
		case q.DeadLetterQueue != "" && dl.Name == q.DeadLetterQueue:
			d.DeadLetters, d.HasDeadLetters = dl, true
		case dl.Name == q.Name:
			d.AsDLQ, d.IsDLQ = dl, true
		}
	}
	for _, src := range d.AsDLQ.Sources {
		if sq, ok := snap.SQSQueue(src); ok {
			d.SourcePages[src] = components.SQSQueueURL(sq.Cluster, sq.Name)
		}
	}
	// Its DLQ (redrive policy) is in the facts above.
	d.Links.Grafana = grafanaSQS.link(s.opts.GrafanaURL, q.Cluster, q.Name)
	if partial(c) {
		return render(c, http.StatusOK, components.SQSQueuePartial(d))
	}
	return render(c, http.StatusOK, components.SQSQueue(d))
}

// sqsQueueParam finds the SQS queue the path names in the latest
// snapshots.
func (s *Server) sqsQueueParam(c echo.Context) (*queue.Snapshot, *queue.SQSQueue, error) {
	cluster, err := pathParam(c, "cluster")
	if err != nil {
		return nil, nil, err
	}
	name, err := pathParam(c, "queue")
	if err != nil {
		return nil, nil, err
	}
	// Only an SQS poll lists SQS queues, so the cluster's snapshot that has
	// the queue is the one.
	for _, snap := range s.mon(c).Snapshots() {
		if snap.Cluster != cluster {
			continue
		}
		if q, ok := snap.SQSQueue(name); ok {
			return snap, q, nil
		}
	}
	return nil, nil, echo.NewHTTPError(http.StatusNotFound, "no such SQS queue")
}

// sqsHistoryURL is the JSON endpoint a queue page's chart reads.
func sqsHistoryURL(q *queue.SQSQueue) string {
	return "/api/v1/sqs/queues/" + url.PathEscape(q.Cluster) + "/" + url.PathEscape(q.Name) + "/history"
}

// sqsQueueJSON is an SQS queue in the API.
type sqsQueueJSON struct {
	Cluster                  string       `json:"cluster"`
	Queue                    string       `json:"queue"`
	FIFO                     bool         `json:"fifo"`
	Status                   queue.Status `json:"status"`
	StatusReason             string       `json:"status_reason,omitempty"`
	StatusSince              *time.Time   `json:"status_since,omitempty"`
	Visible                  int64        `json:"visible"`
	InFlight                 int64        `json:"in_flight"`
	Delayed                  int64        `json:"delayed"`
	VisibilityTimeoutSeconds float64      `json:"visibility_timeout_seconds"`
	RetentionSeconds         *float64     `json:"retention_seconds"`
	DeadLetterQueue          string       `json:"dead_letter_queue,omitempty"`
	MaxReceiveCount          int          `json:"max_receive_count,omitempty"`
	// OldestAgeSeconds is the oldest message's age where known, as
	// OldestAgeBasis says (browse: an estimate, a lower bound).
	OldestAgeSeconds *float64          `json:"oldest_age_seconds"`
	OldestAgeBasis   queue.SQSAgeBasis `json:"oldest_age_basis,omitempty"`
	DLQ              string            `json:"dlq,omitempty"`
	Error            string            `json:"error,omitempty"`
	// RatesUnknown says why an SQS queue has no consume_rate,
	// produce_rate or ETA: SQS's attributes count neither.
	RatesUnknown string `json:"rates_unknown,omitempty"`
}

// apiSQSQueues is GET /api/v1/sqs/queues: every SQS queue, worst first
// (status severity, then visible messages).
func (s *Server) apiSQSQueues(c echo.Context) error {
	var rows []components.SQSRow
	for _, snap := range s.mon(c).Snapshots() {
		rows = append(rows, sqsRows(snap)...)
	}
	sortRows(rows, sqsSorts["status"], "desc", compareSQSNames)
	out := make([]sqsQueueJSON, len(rows))
	for i, r := range rows {
		q := r.Q
		out[i] = sqsQueueJSON{
			Cluster: q.Cluster, Queue: q.Name, FIFO: q.FIFO, Status: r.Status, StatusReason: q.EffectiveReason(), StatusSince: sinceJSON(q.StatusSince),
			Visible: q.Visible, InFlight: q.InFlight, Delayed: q.Delayed,
			VisibilityTimeoutSeconds: q.VisibilityTimeout.Seconds(),
			DeadLetterQueue:          q.DeadLetterQueue, MaxReceiveCount: q.MaxReceiveCount, Error: q.Err,
			RatesUnknown: components.SQSRatesUnknown,
		}
		if q.Retention > 0 {
			sec := q.Retention.Seconds()
			out[i].RetentionSeconds = &sec
		}
		if q.OldestAgeBasis != queue.SQSAgeUnknown {
			sec := q.OldestAge.Seconds()
			out[i].OldestAgeSeconds, out[i].OldestAgeBasis = &sec, q.OldestAgeBasis
		}
		if r.DLQURL != "" {
			out[i].DLQ = (queue.DLQRef{Broker: queue.SQS, Cluster: q.Cluster, Name: q.Name}).ID()
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"queues": out})
}

// sqsPointJSON is one read of an SQS queue in its history.
type sqsPointJSON struct {
	At      time.Time `json:"at"`
	Visible int64     `json:"visible"`
}

// apiSQSQueueHistory is the queue chart's data: the kept reader history
// of one SQS queue (its visible messages), oldest first.
func (s *Server) apiSQSQueueHistory(c echo.Context) error {
	_, q, err := s.sqsQueueParam(c)
	if err != nil {
		return err
	}
	r := q.Reader()
	h := s.mon(c).ReaderHistory(r.Key())
	out := make([]sqsPointJSON, len(h))
	for i, p := range h {
		out[i] = sqsPointJSON{At: p.At, Visible: p.Backlog}
	}
	return c.JSON(http.StatusOK, map[string]any{"cluster": q.Cluster, "queue": q.Name, "history": out})
}
