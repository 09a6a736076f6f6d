package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// consumerRows are the JetStream consumers of a snapshot as overview rows.
func consumerRows(snap *queue.Snapshot) []components.ConsumerRow {
	out := make([]components.ConsumerRow, 0, len(snap.Consumers))
	for i := range snap.Consumers {
		c := &snap.Consumers[i]
		out = append(out, components.ConsumerRow{C: c, Status: c.EffectiveStatus()})
	}
	return out
}

// consumerSorts are the consumer table's sortable columns. Status sorts by
// harm, severity then pending, as groups do.
var consumerSorts = map[string]sortFunc[components.ConsumerRow]{
	"name": func(a, b components.ConsumerRow) int { return strings.Compare(a.C.Name, b.C.Name) },
	"cluster": func(a, b components.ConsumerRow) int {
		return strings.Compare(a.C.Cluster+"\x00"+a.C.Stream, b.C.Cluster+"\x00"+b.C.Stream)
	},
	"status": func(a, b components.ConsumerRow) int {
		if c := a.Status.Severity() - b.Status.Severity(); c != 0 {
			return c
		}
		return cmpInt(int64(a.C.Pending), int64(b.C.Pending))
	},
	"pending":     func(a, b components.ConsumerRow) int { return cmpInt(int64(a.C.Pending), int64(b.C.Pending)) },
	"inflight":    func(a, b components.ConsumerRow) int { return a.C.AckPending - b.C.AckPending },
	"waiting":     func(a, b components.ConsumerRow) int { return a.C.Waiting - b.C.Waiting },
	"redelivered": func(a, b components.ConsumerRow) int { return a.C.Redelivered - b.C.Redelivered },
	"lagsec":      func(a, b components.ConsumerRow) int { return cmpFloat(a.C.LagSeconds, b.C.LagSeconds) },
}

func compareConsumerNames(a, b components.ConsumerRow) int {
	return strings.Compare(a.C.Cluster+"\x00"+a.C.Stream+"\x00"+a.C.Name, b.C.Cluster+"\x00"+b.C.Stream+"\x00"+b.C.Name)
}

// natsConsumerPage is /nats/{cluster}/streams/{stream}/consumers/{consumer}.
func (s *Server) natsConsumerPage(c echo.Context) error {
	snap, con, err := s.consumerParam(c)
	if err != nil {
		return err
	}
	shown := s.recentPause(c.Request().Context(), *con, snap.Time)
	con = &shown
	d := components.NATSConsumerData{
		Chrome: s.chrome(c, con.Name, "overview"), Consumer: con, Status: con.EffectiveStatus(),
		HistoryURL: consumerHistoryURL(con), Range: chartRange(c),
		ResetAPI: ConsumerResetAPI(con), PauseAPI: consumerAPI(con),
	}
	if _, err := s.consumerActions(); err == nil {
		d.CanReset = principalOf(c.Request().Context()).mayReader(config.RoleOperator, con.Reader())
	}
	if st, ok := snap.Stream(con.Stream); ok {
		d.Stream, d.HasStream = *st, true
	}
	d.DeadLetters, d.HasDeadLetters = consumerDLQ(snap, con)
	// The captured dead letters are in the facts above.
	d.Links.Grafana = grafanaConsumer.link(s.opts.GrafanaURL, con.Cluster, con.Stream, con.Name)
	if partial(c) {
		return render(c, http.StatusOK, components.NATSConsumerPartial(d))
	}
	return render(c, http.StatusOK, components.NATSConsumer(d))
}

// consumerParam finds the consumer the path names in the latest snapshots.
func (s *Server) consumerParam(c echo.Context) (*queue.Snapshot, *queue.StreamConsumer, error) {
	var names [3]string
	for i, p := range []string{"cluster", "stream", "consumer"} {
		v, err := pathParam(c, p)
		if err != nil {
			return nil, nil, err
		}
		names[i] = v
	}
	// Only a JetStream poll lists consumers, so the cluster's snapshot that
	// has the consumer is the one, without naming the broker.
	for _, snap := range s.mon(c).Snapshots() {
		if snap.Cluster != names[0] {
			continue
		}
		if con, ok := snap.Consumer(names[1], names[2]); ok {
			return snap, con, nil
		}
	}
	return nil, nil, echo.NewHTTPError(http.StatusNotFound, "no such NATS consumer")
}

// consumerHistoryURL is the JSON endpoint a consumer page's chart reads.
func consumerHistoryURL(c *queue.StreamConsumer) string {
	return "/api/v1/nats/consumers/" + url.PathEscape(c.Cluster) + "/" + url.PathEscape(c.Stream) + "/" + url.PathEscape(c.Name) + "/history"
}

// consumerDLQ is the DLQ of the dead letters captured from c, if it has
// any. Capture names it after the consumer, or stream.consumer when
// consumers of several streams share the name; snap is c's own poll, so
// its DLQs are of c's broker.
func consumerDLQ(snap *queue.Snapshot, c *queue.StreamConsumer) (queue.DLQ, bool) {
	for _, d := range snap.DLQs {
		if len(d.Sources) == 0 || d.Sources[0] != c.Stream {
			continue
		}
		if d.Name == c.Name || d.Name == c.Stream+"."+c.Name {
			return d, true
		}
	}
	return queue.DLQ{}, false
}

// consumerPointJSON is one poll of a JetStream consumer in its history;
// lag_seconds is null while the lag was not known.
type consumerPointJSON struct {
	At         time.Time `json:"at"`
	Pending    int64     `json:"pending"`
	AckPending int       `json:"ack_pending"`
	LagSeconds *float64  `json:"lag_seconds"`
}

// apiNATSConsumerHistory is the consumer chart's data: the kept history of
// one JetStream consumer, oldest first.
func (s *Server) apiNATSConsumerHistory(c echo.Context) error {
	_, con, err := s.consumerParam(c)
	if err != nil {
		return err
	}
	points := s.consumerHistory(s.mon(c), con)
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
	etaJSON
	// RatesUnknown says why consume_rate and produce_rate are absent for
	// good: a filtered consumer (queue.StreamConsumer.RatesUnknown).
	RatesUnknown string `json:"rates_unknown,omitempty"`
}

// apiNATSConsumers is GET /api/v1/nats/consumers: every JetStream
// consumer, worst first (status severity, then pending).
func (s *Server) apiNATSConsumers(c echo.Context) error {
	var rows []components.ConsumerRow
	for _, snap := range s.mon(c).Snapshots() {
		rows = append(rows, consumerRows(snap)...)
	}
	sortRows(rows, consumerSorts["status"], "desc", compareConsumerNames)
	out := make([]consumerJSON, len(rows))
	for i, r := range rows {
		k := r.C
		out[i] = consumerJSON{
			Cluster: k.Cluster, Stream: k.Stream, Consumer: k.Name, Kind: "push",
			Status: r.Status, StatusReason: k.EffectiveReason(), StatusSince: sinceJSON(k.StatusSince), Pending: k.Pending,
			AckPending: k.AckPending, MaxAckPending: k.MaxAckPending, Redelivered: k.Redelivered,
			Waiting: k.Waiting, PushBound: k.PushBound, DeliveredSeq: k.DeliveredSeq,
			AckFloorSeq: k.AckFloorSeq, Error: k.Err, etaJSON: toETAJSON(k.ETA), RatesUnknown: k.RatesUnknown(),
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

// consumerHistorian is the part of a Monitor that keeps JetStream consumer
// history (the collector does): the consumer page's specific section, since
// its chart draws ack pending beside what a reader's history keeps. It is optional, so monitors that watch no
// NATS cluster need not implement it.
type consumerHistorian interface {
	ConsumerHistory(cluster, stream, consumer string) []queue.ConsumerPoint
}

// consumerHistory is c's kept history, or none when the monitor keeps no
// consumer history.
func (s *Server) consumerHistory(m Monitor, c *queue.StreamConsumer) []queue.ConsumerPoint {
	h, ok := m.(consumerHistorian)
	if !ok {
		return nil
	}
	return h.ConsumerHistory(c.Cluster, c.Stream, c.Name)
}
