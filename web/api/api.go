package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/auth"
	"github.com/queuewatch/queuewatch/web/view"
)

// GroupJSON is a consumer group in API responses.
type GroupJSON struct {
	Cluster       string          `json:"cluster"`
	Group         string          `json:"group"`
	State         string          `json:"state"`
	Type          string          `json:"type"`
	Protocol      string          `json:"protocol"`
	Members       int             `json:"members"`
	Status        queue.Status    `json:"status"`
	StatusReason  string          `json:"status_reason,omitempty"`
	StatusSince   *time.Time      `json:"status_since,omitempty"`
	Lag           int64           `json:"lag"`
	MaxLagSeconds *float64        `json:"max_lag_seconds"` // nil while pending
	Pending       bool            `json:"lag_seconds_pending,omitempty"`
	ETASeconds    *float64        `json:"eta_seconds,omitempty"`
	FallingBehind bool            `json:"falling_behind,omitempty"`
	ConsumeRate   *float64        `json:"consume_rate,omitempty"` // messages/s over the status window
	ProduceRate   *float64        `json:"produce_rate,omitempty"`
	Error         string          `json:"error,omitempty"`
	Topics        []topicJSON     `json:"topics,omitempty"`
	Culprits      []CulpritJSON   `json:"culprits,omitempty"`
	Partitions    []PartitionJSON `json:"partitions,omitempty"`
	History       []historyJSON   `json:"history,omitempty"`

	// RetentionHeadroom is the soonest over the group's lagging
	// partitions; absent when unknown.
	RetentionHeadroom *HeadroomJSON `json:"retention_headroom,omitempty"`
}

type topicJSON struct {
	Topic         string   `json:"topic"`
	Lag           int64    `json:"lag"`
	Partitions    int      `json:"partitions"`
	Uncommitted   int      `json:"uncommitted_partitions"`
	Lost          int64    `json:"lost_messages"`
	MaxLagSeconds *float64 `json:"max_lag_seconds"` // nil while pending
	Pending       bool     `json:"lag_seconds_pending,omitempty"`
}

// PartitionJSON is one partition of a group in the API.
type PartitionJSON struct {
	Topic               string   `json:"topic"`
	Partition           int32    `json:"partition"`
	Committed           *int64   `json:"committed"`
	End                 int64    `json:"end"`
	LogStart            int64    `json:"log_start"`
	Lag                 int64    `json:"lag"`
	LagSeconds          *float64 `json:"lag_seconds"` // nil while pending
	Pending             bool     `json:"lag_seconds_pending,omitempty"`
	LagSecondsEstimated bool     `json:"lag_seconds_estimated,omitempty"`
	Lost                int64    `json:"lost_messages,omitempty"`
	Member              string   `json:"member,omitempty"`
	Host                string   `json:"host,omitempty"`
	// Status is the partition as the group's evaluation judged it;
	// Culprit marks one that made the group's status.
	Status       queue.Status `json:"status"`
	StatusReason string       `json:"status_reason,omitempty"`
	Culprit      bool         `json:"culprit,omitempty"`
}

// CulpritJSON is a partition whose evaluation made its group's status,
// as Burrow's group status names its partitions in error.
type CulpritJSON struct {
	Topic     string       `json:"topic"`
	Partition int32        `json:"partition"`
	Status    queue.Status `json:"status"`
	Reason    string       `json:"reason"`
	Lag       int64        `json:"lag"`
}

type historyJSON struct {
	At         time.Time `json:"at"`
	Lag        int64     `json:"lag"`
	LagSeconds float64   `json:"lag_seconds"`
}

// DLQJSON is one DLQ in GET /api/v1/dlqs.
type DLQJSON struct {
	ID               string   `json:"id"`
	Broker           string   `json:"broker"`
	Cluster          string   `json:"cluster"`
	VHost            string   `json:"vhost,omitempty"`
	Name             string   `json:"name"`
	Sources          []string `json:"sources"`
	Detection        string   `json:"detection"`
	Messages         int64    `json:"messages"`
	OldestAgeSeconds *float64 `json:"oldest_age_seconds"`
	Error            string   `json:"error,omitempty"`
}

type sourceJSON struct {
	Broker      string     `json:"broker"`
	Cluster     string     `json:"cluster"`
	Up          bool       `json:"up"`
	Polled      bool       `json:"polled"`
	LastPoll    *time.Time `json:"last_poll,omitempty"`
	LastSuccess *time.Time `json:"last_success,omitempty"`
	LastError   string     `json:"last_error,omitempty"`
	Partial     []string   `json:"partial,omitempty"`
	DurationMS  int64      `json:"duration_ms"`
	PolledBy    string     `json:"polled_by,omitempty"`
}

func toGroupJSON(g *queue.ConsumerGroup) GroupJSON {
	out := GroupJSON{
		Cluster: g.Cluster, Group: g.Name, State: g.State, Type: string(g.Type), Protocol: g.Protocol,
		Members: g.Members, Status: g.EffectiveStatus(), StatusReason: g.EffectiveReason(),
		StatusSince: view.SinceJSON(g.StatusSince), Lag: g.TotalLag(), Error: g.Err,
		RetentionHeadroom: toHeadroomJSON(g.Headroom),
	}
	out.MaxLagSeconds, out.Pending = knownSeconds(g.MaxLagSeconds(), g.LagSecondsPending())
	if g.ETA.Rates {
		c, p := g.ETA.ConsumeRate, g.ETA.ProduceRate
		out.ConsumeRate, out.ProduceRate = &c, &p
	}
	if g.ETA.Known {
		out.FallingBehind = g.ETA.FallingBehind
		if !g.ETA.FallingBehind {
			sec := g.ETA.In.Seconds()
			out.ETASeconds = &sec
		}
	}
	return out
}

// Groups is GET /api/v1/groups: every consumer group, worst first.
func (s *Server) Groups(c echo.Context) error {
	groups, _ := s.GroupsAndDLQs(c)
	out := make([]GroupJSON, len(groups))
	for i := range groups {
		out[i] = toGroupJSON(&groups[i])
	}
	return c.JSON(http.StatusOK, map[string]any{"groups": out})
}

// Group is GET /api/v1/groups/{cluster}/{group}: one group with its
// partitions and history.
func (s *Server) Group(c echo.Context) error {
	_, row, err := view.Groups.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	g := row.G
	out := toGroupJSON(g)
	for _, t := range g.Topics() {
		tj := topicJSON{Topic: t.Topic, Lag: t.Lag, Partitions: t.Partitions, Uncommitted: t.Uncommitted, Lost: t.Lost}
		tj.MaxLagSeconds, tj.Pending = knownSeconds(t.MaxLagSeconds, t.LagSecondsPending)
		out.Topics = append(out.Topics, tj)
	}
	culprits := map[queue.TopicPartition]bool{}
	for _, p := range g.Culprits() {
		culprits[queue.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = true
		out.Culprits = append(out.Culprits, CulpritJSON{p.Topic, p.Partition, p.Status, p.Reason(), p.Lag})
	}
	judged := view.JudgedOf(g)
	for _, p := range g.Partitions {
		tp := queue.TopicPartition{Topic: p.Topic, Partition: p.Partition}
		j := judged.Of(tp)
		pj := PartitionJSON{
			Topic: p.Topic, Partition: p.Partition, End: p.End, LogStart: p.LogStart, Lag: p.Lag,
			LagSecondsEstimated: p.LagSecondsEstimated, Lost: p.Lost,
			Member: p.Member, Host: p.Host,
			Status: j.Status, StatusReason: j.Reason(), Culprit: culprits[tp],
		}
		pj.LagSeconds, pj.Pending = knownSeconds(p.LagSeconds, p.LagSecondsPending)
		if p.HasCommit {
			committed := p.Committed
			pj.Committed = &committed
		}
		out.Partitions = append(out.Partitions, pj)
	}
	for _, h := range s.groupHistory(s.Mon(c), g) {
		out.History = append(out.History, historyJSON{h.At, h.Backlog, h.LagSeconds})
	}
	return c.JSON(http.StatusOK, out)
}

// GroupHistory is the chart's data: the kept history of one group,
// without the partition list the full group endpoint carries.
func (s *Server) GroupHistory(c echo.Context) error {
	_, row, err := view.Groups.Find(c, s.Mon(c))
	if err != nil {
		return err
	}
	g := row.G
	h := s.groupHistory(s.Mon(c), g)
	out := make([]historyJSON, len(h))
	for i, p := range h {
		out[i] = historyJSON{p.At, p.Backlog, p.LagSeconds}
	}
	return c.JSON(http.StatusOK, map[string]any{"cluster": g.Cluster, "group": g.Name, "history": out})
}

// groupHistory is g's kept history: its reader's, since a group's chart
// draws only its lag and lag seconds.
func (s *Server) groupHistory(m auth.Monitor, g *queue.ConsumerGroup) []queue.ReaderPoint {
	r := g.Reader()
	return m.ReaderHistory(r.Key())
}

// DLQs is GET /api/v1/dlqs: every DLQ the principal sees.
func (s *Server) DLQs(c echo.Context) error {
	_, dlqs := s.GroupsAndDLQs(c)
	out := make([]DLQJSON, len(dlqs))
	for i, d := range dlqs {
		out[i] = DLQJSON{
			ID: d.ID(), Broker: string(d.Broker), Cluster: d.Cluster, VHost: d.VHost, Name: d.Name,
			Sources: d.Sources, Detection: string(d.Detection), Messages: d.Messages, Error: d.Err,
		}
		if out[i].Sources == nil {
			out[i].Sources = []string{}
		}
		if d.HasOldestAge {
			age := d.OldestAge.Seconds()
			out[i].OldestAgeSeconds = &age
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"dlqs": out})
}

// Sources is GET /api/v1/sources: every polled source and how its last
// poll went.
func (s *Server) Sources(c echo.Context) error {
	out := []sourceJSON{}
	for _, st := range s.Mon(c).Statuses() {
		sj := sourceJSON{
			Broker: string(st.Broker), Cluster: st.Cluster, Up: st.Up, Polled: st.Polled,
			LastError: st.LastError, Partial: st.Partial, DurationMS: st.Duration.Milliseconds(),
			PolledBy: st.PolledBy,
		}
		if !st.LastPoll.IsZero() {
			sj.LastPoll = &st.LastPoll
		}
		if !st.LastSuccess.IsZero() {
			sj.LastSuccess = &st.LastSuccess
		}
		out = append(out, sj)
	}
	return c.JSON(http.StatusOK, map[string]any{"sources": out})
}

// withOutcomes makes a receipt's outcomes an empty list rather than null
// when no message was touched, as the API document promises.
func withOutcomes(r dlqreplay.Receipt) dlqreplay.Receipt {
	if r.Outcomes == nil {
		r.Outcomes = []dlqreplay.Outcome{}
	}
	return r
}

// knownSeconds is lag seconds for JSON: null, and pending true, while the
// record timestamps are still being read, so that no client takes it for 0.
func knownSeconds(v float64, pending bool) (*float64, bool) {
	if pending {
		return nil, true
	}
	return &v, false
}
