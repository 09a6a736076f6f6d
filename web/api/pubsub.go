package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/view"
)

// PubsubLintJSON is one configuration trap of a subscription.
type PubsubLintJSON struct {
	Lint     string `json:"lint"`
	Sentence string `json:"sentence"`
}

// PubsubSubscriptionJSON is a Pub/Sub subscription in the API. The
// backlog and oldest age are Cloud Monitoring's (minutes behind), null
// when the project does not read it.
type PubsubSubscriptionJSON struct {
	Cluster             string           `json:"cluster"`
	Subscription        string           `json:"subscription"`
	Topic               string           `json:"topic"`
	Delivery            string           `json:"delivery"`
	Status              queue.Status     `json:"status"`
	StatusReason        string           `json:"status_reason,omitempty"`
	StatusSince         *time.Time       `json:"status_since,omitempty"`
	DeadLetterTopic     string           `json:"dead_letter_topic,omitempty"`
	MaxDeliveryAttempts int              `json:"max_delivery_attempts,omitempty"`
	DeadLetterQueues    []string         `json:"dead_letter_queues,omitempty"`
	AckDeadlineSeconds  float64          `json:"ack_deadline_seconds"`
	RetentionSeconds    float64          `json:"retention_seconds"`
	RetainAcked         bool             `json:"retain_acked"`
	ExactlyOnce         bool             `json:"exactly_once"`
	Ordering            bool             `json:"ordering"`
	Filter              string           `json:"filter,omitempty"`
	State               string           `json:"state,omitempty"`
	Detached            bool             `json:"detached"`
	Lints               []PubsubLintJSON `json:"lints"`
	Undelivered         *int64           `json:"undelivered"`
	OldestUnackedSecs   *float64         `json:"oldest_unacked_seconds"`
	MetricsAt           *time.Time       `json:"metrics_at,omitempty"`
	DLQ                 string           `json:"dlq,omitempty"`
}

// PubSubSubscriptions is GET /api/v1/pubsub/subscriptions: every
// subscription, worst first (status severity, traps, backlog).
func (s *Server) PubSubSubscriptions(c echo.Context) error {
	rows := view.PubSubSubscriptions.All(s.Mon(c))
	out := make([]PubsubSubscriptionJSON, len(rows))
	for i, r := range rows {
		sub := r.S
		j := PubsubSubscriptionJSON{
			Cluster: sub.Cluster, Subscription: sub.Name, Topic: sub.Topic, Delivery: sub.Delivery,
			Status: r.Status, StatusReason: sub.StatusReason, StatusSince: view.SinceJSON(sub.StatusSince),
			DeadLetterTopic: sub.DeadLetterTopic, MaxDeliveryAttempts: sub.MaxDeliveryAttempts, DeadLetterQueues: sub.DeadLetterQueues,
			AckDeadlineSeconds: sub.AckDeadline.Seconds(), RetentionSeconds: sub.Retention.Seconds(), RetainAcked: sub.RetainAcked,
			ExactlyOnce: sub.ExactlyOnce, Ordering: sub.Ordering, Filter: sub.Filter, State: sub.State, Detached: sub.Detached,
			Lints: make([]PubsubLintJSON, len(sub.Lints)),
		}
		for k, l := range sub.Lints {
			j.Lints[k] = PubsubLintJSON{Lint: l.Kind, Sentence: l.Sentence}
		}
		if m := sub.Monitoring; m != nil {
			if m.HasUndelivered {
				n := m.Undelivered
				j.Undelivered = &n
			}
			if m.HasOldestAge {
				sec := m.OldestAge.Seconds()
				j.OldestUnackedSecs = &sec
			}
			at := m.At
			j.MetricsAt = &at
		}
		if r.DLQURL != "" {
			j.DLQ = (queue.DLQRef{Broker: queue.PubSub, Cluster: sub.Cluster, Name: sub.Name}).ID()
		}
		out[i] = j
	}
	return c.JSON(http.StatusOK, map[string]any{"subscriptions": out})
}

// PubsubPointJSON is one read of a subscription in its history: Cloud
// Monitoring's figures, absent without them.
type PubsubPointJSON struct {
	At                   time.Time `json:"at"`
	Undelivered          int64     `json:"undelivered"`
	OldestUnackedSeconds *float64  `json:"oldest_unacked_seconds"`
}

// PubSubSubscriptionHistory is the subscription chart's data: the kept
// reader history of one subscription, oldest first. Without Cloud
// Monitoring its backlog is unknown and the history is empty.
func (s *Server) PubSubSubscriptionHistory(c echo.Context) error {
	_, row, err := view.PubSubSubscriptions.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	sub := row.S
	r := sub.Reader()
	h := s.Mon(c).ReaderHistory(r.Key())
	out := make([]PubsubPointJSON, len(h))
	for i, p := range h {
		out[i] = PubsubPointJSON{At: p.At, Undelivered: p.Backlog}
		if p.HasLagSeconds {
			sec := p.LagSeconds
			out[i].OldestUnackedSeconds = &sec
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"cluster": sub.Cluster, "subscription": sub.Name, "history": out})
}
