package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/view"
)

// consumerPointJSON is one poll of a JetStream consumer in its history;
// lag_seconds is null while the lag was not known.
type consumerPointJSON struct {
	At         time.Time `json:"at"`
	Pending    int64     `json:"pending"`
	AckPending int       `json:"ack_pending"`
	LagSeconds *float64  `json:"lag_seconds"`
}

// NATSConsumerHistory is the consumer chart's data: the kept history of
// one JetStream consumer, oldest first.
func (s *Server) NATSConsumerHistory(c echo.Context) error {
	_, row, err := view.Consumers.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	con := row.C
	points := s.ConsumerHistory(s.Mon(c), con)
	out := make([]consumerPointJSON, len(points))
	for i, p := range points {
		out[i] = consumerPointJSON{At: p.At, Pending: p.Pending, AckPending: p.AckPending}
		if p.HasLagSeconds {
			lag := p.LagSeconds
			out[i].LagSeconds = &lag
		}
	}
	return c.JSON(http.StatusOK, map[string]any{
		"cluster": con.Cluster, "stream": con.Stream, "consumer": con.Name, "history": out,
	})
}

// consumerJSON is a JetStream consumer in the API.
type consumerJSON struct {
	Cluster       string       `json:"cluster"`
	Stream        string       `json:"stream"`
	Consumer      string       `json:"consumer"`
	Kind          string       `json:"kind"`
	Status        queue.Status `json:"status"`
	StatusReason  string       `json:"status_reason,omitempty"`
	StatusSince   *time.Time   `json:"status_since,omitempty"`
	Pending       uint64       `json:"pending"`
	AckPending    int          `json:"ack_pending"`
	MaxAckPending int          `json:"max_ack_pending"`
	Redelivered   int          `json:"redelivered"`
	Waiting       int          `json:"waiting_pulls"`
	PushBound     bool         `json:"push_bound,omitempty"`
	DeliveredSeq  uint64       `json:"delivered_sequence"`
	AckFloorSeq   uint64       `json:"ack_floor_sequence"`
	LagSeconds    *float64     `json:"lag_seconds,omitempty"`
	Error         string       `json:"error,omitempty"`
	// RetentionHeadroom is from the stream's limits; absent when unknown.
	RetentionHeadroom *HeadroomJSON `json:"retention_headroom,omitempty"`
	etaJSON
	// RatesUnknown says why consume_rate and produce_rate are absent for
	// good: a filtered consumer (queue.StreamConsumer.RatesUnknown).
	RatesUnknown string `json:"rates_unknown,omitempty"`
}

// NATSConsumers is GET /api/v1/nats/consumers: every JetStream
// consumer, worst first (status severity, then pending).
func (s *Server) NATSConsumers(c echo.Context) error {
	rows := view.Consumers.All(s.Mon(c))
	out := make([]consumerJSON, len(rows))
	for i, r := range rows {
		k := r.C
		out[i] = consumerJSON{
			Cluster: k.Cluster, Stream: k.Stream, Consumer: k.Name, Kind: "push",
			Status: r.Status, StatusReason: k.EffectiveReason(), StatusSince: view.SinceJSON(k.StatusSince), Pending: k.Pending,
			AckPending: k.AckPending, MaxAckPending: k.MaxAckPending, Redelivered: k.Redelivered,
			Waiting: k.Waiting, PushBound: k.PushBound, DeliveredSeq: k.DeliveredSeq,
			AckFloorSeq: k.AckFloorSeq, Error: k.Err, etaJSON: toETAJSON(k.ETA), RatesUnknown: k.RatesUnknown(),
			RetentionHeadroom: toHeadroomJSON(k.Headroom),
		}
		if k.Pull {
			out[i].Kind = "pull"
		}
		if k.HasLagSeconds {
			lag := k.LagSeconds
			out[i].LagSeconds = &lag
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"consumers": out})
}
