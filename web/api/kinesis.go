package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/view"
)

// kinesisLeaseJSON is one lease of a KCL application in the API.
type kinesisLeaseJSON struct {
	Shard         string   `json:"shard"`
	Open          bool     `json:"open"`
	Owner         string   `json:"owner"`
	LeaseCounter  int64    `json:"lease_counter"`
	Checkpoint    string   `json:"checkpoint"`
	OwnerSwitches int64    `json:"owner_switches_since_checkpoint"`
	Parents       []string `json:"parents"`
	Children      []string `json:"children"`
	// LagSeconds is MillisBehindLatest at the checkpoint, in seconds;
	// null when not read (a LATEST or AT_TIMESTAMP checkpoint, an error).
	LagSeconds *float64 `json:"lag_seconds"`
	// CheckpointArrival is when the checkpointed record arrived.
	CheckpointArrival *time.Time `json:"checkpoint_arrival,omitempty"`
	Error             string     `json:"error,omitempty"`
}

// KinesisAppJSON is a KCL application in the API.
type KinesisAppJSON struct {
	Cluster      string       `json:"cluster"`
	Application  string       `json:"application"`
	Stream       string       `json:"stream"`
	LeaseTable   string       `json:"lease_table"`
	Status       queue.Status `json:"status"`
	StatusReason string       `json:"status_reason,omitempty"`
	StatusSince  *time.Time   `json:"status_since,omitempty"`
	// LagSeconds is the largest lag of its shards, null when none was read.
	LagSeconds        *float64           `json:"lag_seconds"`
	ShardsBehind      int64              `json:"shards_behind"`
	Workers           int                `json:"workers"`
	Unleased          []string           `json:"unleased_shards"`
	RetentionHeadroom *HeadroomJSON      `json:"retention_headroom,omitempty"`
	Leases            []kinesisLeaseJSON `json:"leases"`
	Error             string             `json:"error,omitempty"`
}

// KinesisApps is GET /api/v1/kinesis/applications: every KCL application
// with its leases, worst first (status severity, then lag).
func (s *Server) KinesisApps(c echo.Context) error {
	rows := view.KinesisApps.All(s.Mon(c))
	out := make([]KinesisAppJSON, len(rows))
	for i, r := range rows {
		out[i] = kinesisAppOut(r.A, r.Status)
	}
	return c.JSON(http.StatusOK, map[string]any{"applications": out})
}

func kinesisAppOut(a *queue.KinesisApplication, st queue.Status) KinesisAppJSON {
	j := KinesisAppJSON{
		Cluster: a.Cluster, Application: a.Name, Stream: a.Stream, LeaseTable: a.LeaseTable,
		Status: st, StatusReason: a.EffectiveReason(), StatusSince: view.SinceJSON(a.StatusSince),
		ShardsBehind: a.ShardsBehind(), Workers: a.Owners(), Unleased: append([]string{}, a.Unleased...),
		RetentionHeadroom: toHeadroomJSON(a.Headroom), Leases: make([]kinesisLeaseJSON, len(a.Leases)), Error: a.Err,
	}
	if lag, _, ok := a.Lag(); ok {
		sec := lag.Seconds()
		j.LagSeconds = &sec
	}
	for i, l := range a.Leases {
		lj := kinesisLeaseJSON{
			Shard: l.Shard, Open: l.Open, Owner: l.Owner, LeaseCounter: l.Counter, Checkpoint: l.Checkpoint,
			OwnerSwitches: l.OwnerSwitches, Parents: append([]string{}, l.Parents...), Children: append([]string{}, l.Children...),
			Error: l.LagErr,
		}
		if l.HasLag {
			sec := l.Behind.Seconds()
			lj.LagSeconds = &sec
		}
		if !l.Arrival.IsZero() {
			at := l.Arrival
			lj.CheckpointArrival = &at
		}
		j.Leases[i] = lj
	}
	return j
}

// kinesisPointJSON is one read of a KCL application in its history.
type kinesisPointJSON struct {
	At           time.Time `json:"at"`
	ShardsBehind int64     `json:"shards_behind"`
	LagSeconds   *float64  `json:"lag_seconds"`
}

// KinesisAppHistory is the application chart's data: its kept reader
// history (shards behind and the largest lag), oldest first.
func (s *Server) KinesisAppHistory(c echo.Context) error {
	_, row, err := view.KinesisApps.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	a := row.A
	r := a.Reader()
	h := s.Mon(c).ReaderHistory(r.Key())
	out := make([]kinesisPointJSON, len(h))
	for i, p := range h {
		out[i] = kinesisPointJSON{At: p.At, ShardsBehind: p.Backlog}
		if p.HasLagSeconds {
			sec := p.LagSeconds
			out[i].LagSeconds = &sec
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"cluster": a.Cluster, "application": a.Name, "history": out})
}
