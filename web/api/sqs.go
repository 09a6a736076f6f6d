package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// SqsQueueJSON is an SQS queue in the API.
type SqsQueueJSON struct {
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
	// RetentionHeadroom is MessageRetentionPeriod less the oldest age;
	// absent when either is unknown.
	RetentionHeadroom *HeadroomJSON `json:"retention_headroom,omitempty"`
	DLQ               string        `json:"dlq,omitempty"`
	Error             string        `json:"error,omitempty"`
	// RatesUnknown says why an SQS queue has no consume_rate,
	// produce_rate or ETA: SQS's attributes count neither.
	RatesUnknown string `json:"rates_unknown,omitempty"`
}

// SQSQueues is GET /api/v1/sqs/queues: every SQS queue, worst first
// (status severity, then visible messages).
func (s *Server) SQSQueues(c echo.Context) error {
	rows := view.SQSQueues.All(s.Mon(c))
	out := make([]SqsQueueJSON, len(rows))
	for i, r := range rows {
		q := r.Q
		out[i] = SqsQueueJSON{
			Cluster: q.Cluster, Queue: q.Name, FIFO: q.FIFO, Status: r.Status, StatusReason: q.EffectiveReason(), StatusSince: view.SinceJSON(q.StatusSince),
			Visible: q.Visible, InFlight: q.InFlight, Delayed: q.Delayed,
			VisibilityTimeoutSeconds: q.VisibilityTimeout.Seconds(),
			DeadLetterQueue:          q.DeadLetterQueue, MaxReceiveCount: q.MaxReceiveCount, Error: q.Err,
			RatesUnknown: components.SQSRatesUnknown, RetentionHeadroom: toHeadroomJSON(q.RetentionHeadroom()),
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

// SqsPointJSON is one read of an SQS queue in its history.
type SqsPointJSON struct {
	At      time.Time `json:"at"`
	Visible int64     `json:"visible"`
}

// SQSQueueHistory is the queue chart's data: the kept reader history
// of one SQS queue (its visible messages), oldest first.
func (s *Server) SQSQueueHistory(c echo.Context) error {
	_, row, err := view.SQSQueues.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	q := row.Q
	r := q.Reader()
	h := s.Mon(c).ReaderHistory(r.Key())
	out := make([]SqsPointJSON, len(h))
	for i, p := range h {
		out[i] = SqsPointJSON{At: p.At, Visible: p.Backlog}
	}
	return c.JSON(http.StatusOK, map[string]any{"cluster": q.Cluster, "queue": q.Name, "history": out})
}
