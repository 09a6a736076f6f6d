package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
	"github.com/queuewatch/queuewatch/web/view"
)

// etaJSON is a reader's catch-up ETA and the rates it comes from, in the
// fields a group has: rates are null while unknown, eta_seconds null while
// unknown or falling behind.
type etaJSON struct {
	ETASeconds    *float64 `json:"eta_seconds,omitempty"`
	FallingBehind bool     `json:"falling_behind,omitempty"`
	ConsumeRate   *float64 `json:"consume_rate,omitempty"` // messages/s over the status window
	ProduceRate   *float64 `json:"produce_rate,omitempty"`
}

func toETAJSON(e queue.ETA) etaJSON {
	var out etaJSON
	if e.Rates {
		c, p := e.ConsumeRate, e.ProduceRate
		out.ConsumeRate, out.ProduceRate = &c, &p
	}
	if e.Known {
		out.FallingBehind = e.FallingBehind
		if !e.FallingBehind {
			sec := e.In.Seconds()
			out.ETASeconds = &sec
		}
	}
	return out
}

// rabbitQueueJSON is a RabbitMQ queue in the API.
type rabbitQueueJSON struct {
	ID           string       `json:"id"`
	Cluster      string       `json:"cluster"`
	VHost        string       `json:"vhost"`
	Queue        string       `json:"queue"`
	Type         string       `json:"type"`
	Status       queue.Status `json:"status"`
	StatusReason string       `json:"status_reason,omitempty"`
	StatusSince  *time.Time   `json:"status_since,omitempty"`
	Ready        int64        `json:"ready"`
	Unacked      int64        `json:"unacked"`
	Consumers    int          `json:"consumers"`
	// Utilisation is consumer_utilisation (0 to 1), null when the broker
	// does not say.
	Utilisation    *float64 `json:"consumer_utilisation"`
	HeadAgeSeconds *float64 `json:"head_message_age_seconds"`
	DeadLetterTo   string   `json:"dead_letter_exchange,omitempty"`
	DeadLetterDLQ  string   `json:"dead_letter_dlq,omitempty"`
	DLQ            string   `json:"dlq,omitempty"`
	// RetentionHeadroom is from the message TTL and max-length with
	// drop-head; absent when unknown, and for a queue that dead-letters.
	RetentionHeadroom *HeadroomJSON `json:"retention_headroom,omitempty"`
	etaJSON
}

func toRabbitQueueJSON(snap *queue.Snapshot, q *queue.Queue) rabbitQueueJSON {
	out := rabbitQueueJSON{
		ID: q.Reader().ID(), Cluster: q.Cluster, VHost: q.VHost, Queue: q.Name, Type: q.Type,
		Status: q.EffectiveStatus(), StatusReason: q.StatusReason, StatusSince: view.SinceJSON(q.StatusSince),
		Ready: q.Ready, Unacked: q.Unacked, Consumers: q.Consumers, etaJSON: toETAJSON(q.ETA),
		RetentionHeadroom: toHeadroomJSON(q.RetentionHeadroom()),
	}
	if q.HasUtilisation {
		u := q.Utilisation
		out.Utilisation = &u
	}
	if q.HasHeadAge {
		sec := q.HeadMessageAge.Seconds()
		out.HeadAgeSeconds = &sec
	}
	if q.HasDeadLetter {
		out.DeadLetterTo = q.DeadLetterExchange
		if out.DeadLetterTo == "" {
			out.DeadLetterTo = "(default exchange)"
		}
	}
	if d, ok := snap.DeadLettersTo(q); ok {
		out.DeadLetterDLQ = d.ID()
	}
	if !snap.JudgedAsReader(q.VHost, q.Name) {
		out.DLQ = (queue.DLQRef{Broker: queue.RabbitMQ, Cluster: q.Cluster, VHost: q.VHost, Name: q.Name}).ID()
	}
	return out
}

// RabbitQueues is GET /api/v1/rabbitmq/queues: every RabbitMQ queue,
// worst first (status severity, then ready messages).
func (s *Server) RabbitQueues(c echo.Context) error {
	var rows []components.QueueRow
	snaps := map[*queue.Queue]*queue.Snapshot{}
	for _, snap := range s.Mon(c).Snapshots() {
		for i := range snap.Queues {
			q := &snap.Queues[i]
			rows = append(rows, components.QueueRow{Q: q})
			snaps[q] = snap
		}
	}
	view.SortRows(rows, view.QueueSorts["status"], "desc", view.CompareQueueNames)
	out := make([]rabbitQueueJSON, len(rows))
	for i, r := range rows {
		out[i] = toRabbitQueueJSON(snaps[r.Q], r.Q)
	}
	return c.JSON(http.StatusOK, map[string]any{"queues": out})
}

// RabbitQueue is GET /api/v1/rabbitmq/queues/{cluster}/{vhost}/{queue}.
func (s *Server) RabbitQueue(c echo.Context) error {
	snap, row, err := view.Queues.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	q := row.Q
	return c.JSON(http.StatusOK, toRabbitQueueJSON(snap, q))
}

// rabbitPointJSON is one poll of a RabbitMQ queue in its history; the
// head age is null where the broker does not report it.
type rabbitPointJSON struct {
	At             time.Time `json:"at"`
	Ready          int64     `json:"ready"`
	HeadAgeSeconds *float64  `json:"head_message_age_seconds"`
}

// RabbitQueueHistory is the queue chart's data: the kept reader history
// of one RabbitMQ queue (its ready messages and head age), oldest first.
func (s *Server) RabbitQueueHistory(c echo.Context) error {
	_, row, err := view.Queues.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	q := row.Q
	r := q.Reader()
	h := s.Mon(c).ReaderHistory(r.Key())
	out := make([]rabbitPointJSON, len(h))
	for i, p := range h {
		out[i] = rabbitPointJSON{At: p.At, Ready: p.Backlog}
		if p.HasLagSeconds {
			sec := p.LagSeconds
			out[i].HeadAgeSeconds = &sec
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"cluster": q.Cluster, "vhost": q.VHost, "queue": q.Name, "history": out})
}
