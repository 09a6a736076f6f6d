package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

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

// addConsumerSummary counts JetStream consumers in the overview's lag
// cards and banner the way groups count: warn, stall and stop lag; stall
// and stop are stopped.
func addConsumerSummary(sum *components.Summary, consumers []components.ConsumerRow) {
	sum.Groups += len(consumers)
	for _, r := range consumers {
		switch r.Status {
		case queue.StatusWarn, queue.StatusStall, queue.StatusStop:
			sum.Lagging++
			if r.Status.Severity() >= queue.StatusStall.Severity() {
				sum.Stopped++
			}
		}
	}
}

// consumerAttention is a "Needs attention" line for every JetStream
// consumer that is not ok, ranked with the groups by status then size.
func consumerAttention(consumers []components.ConsumerRow) []attentionItem {
	var items []attentionItem
	for _, r := range consumers {
		if r.Status.Severity() == queue.StatusOK.Severity() {
			continue
		}
		c := r.C
		a := components.Attention{
			Class: string(r.Status), Glyph: components.StatusGlyph(r.Status), Word: string(r.Status),
			Name: c.Name, Where: "nats:" + c.Cluster + " · " + c.Stream,
			Metric: "pending " + components.Count(int64(c.Pending)), MetricExact: components.Exact(int64(c.Pending)) + " messages",
			Reason: c.EffectiveReason(), Href: components.NATSConsumerURL(c.Cluster, c.Stream, c.Name), Action: "open",
		}
		if c.HasLagSeconds {
			a.Age = components.Seconds(c.LagSeconds)
			a.AgeTitle = "the next message this consumer gets is " + a.Age + " old"
		}
		items = append(items, attentionItem{status: r.Status, size: int64(c.Pending), a: a})
	}
	return items
}

// natsConsumerPage is /nats/{cluster}/streams/{stream}/consumers/{consumer}.
func (s *Server) natsConsumerPage(c echo.Context) error {
	var names [3]string
	for i, p := range []string{"cluster", "stream", "consumer"} {
		v, err := pathParam(c, p)
		if err != nil {
			return err
		}
		names[i] = v
	}
	for _, snap := range s.opts.Monitor.Snapshots() {
		if snap.Broker != queue.NATS || snap.Cluster != names[0] {
			continue
		}
		con, ok := snap.Consumer(names[1], names[2])
		if !ok {
			break
		}
		d := components.NATSConsumerData{Chrome: s.chrome(c, con.Name, "overview"), Consumer: con, Status: con.EffectiveStatus()}
		d.Pending, d.LagTime = s.consumerSparks(con)
		if st, ok := snap.Stream(con.Stream); ok {
			d.Stream, d.HasStream = *st, true
		}
		if partial(c) {
			return render(c, http.StatusOK, components.NATSConsumerPartial(d))
		}
		return render(c, http.StatusOK, components.NATSConsumer(d))
	}
	return echo.NewHTTPError(http.StatusNotFound, "no such NATS consumer")
}

// consumerJSON is a JetStream consumer in the API.
type consumerJSON struct {
	Cluster       string       `json:"cluster"`
	Stream        string       `json:"stream"`
	Consumer      string       `json:"consumer"`
	Kind          string       `json:"kind"`
	Status        queue.Status `json:"status"`
	StatusReason  string       `json:"status_reason,omitempty"`
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
}

// apiNATSConsumers is GET /api/v1/nats/consumers: every JetStream
// consumer, worst first (status severity, then pending).
func (s *Server) apiNATSConsumers(c echo.Context) error {
	var rows []components.ConsumerRow
	for _, snap := range s.opts.Monitor.Snapshots() {
		rows = append(rows, consumerRows(snap)...)
	}
	sortRows(rows, consumerSorts["status"], "desc", compareConsumerNames)
	out := make([]consumerJSON, len(rows))
	for i, r := range rows {
		k := r.C
		out[i] = consumerJSON{
			Cluster: k.Cluster, Stream: k.Stream, Consumer: k.Name, Kind: "push",
			Status: r.Status, StatusReason: k.EffectiveReason(), Pending: k.Pending,
			AckPending: k.AckPending, MaxAckPending: k.MaxAckPending, Redelivered: k.Redelivered,
			Waiting: k.Waiting, PushBound: k.PushBound, DeliveredSeq: k.DeliveredSeq,
			AckFloorSeq: k.AckFloorSeq, Error: k.Err,
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
// history (the collector does). It is optional, so monitors that watch no
// NATS cluster need not implement it.
type consumerHistorian interface {
	ConsumerHistory(cluster, stream, consumer string) []queue.GroupPoint
}

// consumerSparks are the sparklines of a consumer's pending messages and
// lag seconds over the kept history.
func (s *Server) consumerSparks(c *queue.StreamConsumer) (pending, lag components.Spark) {
	h, ok := s.opts.Monitor.(consumerHistorian)
	if !ok {
		return components.Spark{}, components.Spark{}
	}
	points := h.ConsumerHistory(c.Cluster, c.Stream, c.Name)
	pv, lv := make([]float64, len(points)), make([]float64, len(points))
	var peak int64
	for i, p := range points {
		pv[i], lv[i] = float64(p.Lag), p.LagSeconds
		peak = max(peak, p.Lag)
	}
	return components.NewSpark(pv, "pending of "+c.Name+" · now "+components.Exact(int64(c.Pending))+" · peak "+components.Exact(peak)),
		components.NewSpark(lv, "lag time of "+c.Name+", kept history")
}
