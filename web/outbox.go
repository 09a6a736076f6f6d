package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// outboxCards builds one card per outbox source, worst first; within a
// card tables and slots are worst and biggest first. A configured source
// that never answered still gets a card, with its error.
func (s *Server) outboxCards(c echo.Context, withTrends bool) []components.OutboxCard {
	byName := map[string]*components.OutboxCard{}
	var cards []*components.OutboxCard
	card := func(name string) *components.OutboxCard {
		if c, ok := byName[name]; ok {
			return c
		}
		c := &components.OutboxCard{Source: name, Status: queue.StatusOK}
		byName[name] = c
		cards = append(cards, c)
		return c
	}
	for _, st := range s.mon(c).Statuses() {
		// This file is the outbox broker's own web section: its cards list
		// that broker's sources, also those that never answered, which only
		// their status names.
		if st.Broker != queue.Outbox {
			continue
		}
		c := card(st.Cluster)
		c.LastPoll = st.LastPoll
		if st.Polled && !st.Up {
			c.Down, c.LastError, c.Status = true, st.LastError, queue.StatusError
		}
	}
	hist := s.mon(c)
	for _, snap := range s.mon(c).Snapshots() {
		if len(snap.OutboxTables) == 0 && len(snap.Slots) == 0 {
			continue
		}
		c := card(snap.Cluster)
		for i := range snap.OutboxTables {
			t := &snap.OutboxTables[i]
			row := components.OutboxTableRow{T: t}
			r := t.Reader()
			row.Status, row.Reason = r.Status, r.Reason
			if withTrends {
				row.Trend = tableSpark(t, hist.OutboxHistory(snap.Cluster, t.Table))
			}
			c.Tables = append(c.Tables, row)
			c.Status = queue.Worse(c.Status, row.Status)
		}
		for i := range snap.Slots {
			sl := &snap.Slots[i]
			row := components.SlotRow{S: sl}
			r := sl.Reader()
			row.Status, row.Reason = r.Status, r.Reason
			if withTrends {
				row.Trend = slotSpark(sl, hist.SlotHistory(snap.Cluster, sl.Slot))
			}
			c.Slots = append(c.Slots, row)
			c.Status = queue.Worse(c.Status, row.Status)
		}
	}
	out := make([]components.OutboxCard, 0, len(cards))
	for _, c := range cards {
		slices.SortStableFunc(c.Tables, func(a, b components.OutboxTableRow) int {
			if d := b.Status.Severity() - a.Status.Severity(); d != 0 {
				return d
			}
			if d := cmpInt(b.T.Pending, a.T.Pending); d != 0 {
				return d
			}
			return strings.Compare(a.T.Table, b.T.Table)
		})
		slices.SortStableFunc(c.Slots, func(a, b components.SlotRow) int {
			if d := b.Status.Severity() - a.Status.Severity(); d != 0 {
				return d
			}
			if d := cmpInt(b.S.LagBytes, a.S.LagBytes); d != 0 {
				return d
			}
			return strings.Compare(a.S.Slot, b.S.Slot)
		})
		out = append(out, *c)
	}
	slices.SortStableFunc(out, func(a, b components.OutboxCard) int {
		if d := b.Status.Severity() - a.Status.Severity(); d != 0 {
			return d
		}
		if d := cmpInt(b.Pending(), a.Pending()); d != 0 {
			return d
		}
		return strings.Compare(a.Source, b.Source)
	})
	return out
}

func tableSpark(t *queue.OutboxTable, h []queue.OutboxPoint) components.Spark {
	return countSpark(h, func(p queue.OutboxPoint) int64 { return p.Pending }, "pending rows in "+t.Table, t.Pending)
}

func slotSpark(sl *queue.ReplicationSlot, h []queue.SlotPoint) components.Spark {
	vals := values(h, func(p queue.SlotPoint) int64 { return p.LagBytes })
	return components.NewSpark(vals, "lag of slot "+sl.Slot+" · now "+queue.HumanBytes(sl.LagBytes))
}

// outboxReaders are the cards' tables and slots as readers, for the
// overview's outbox banner and "Needs attention".
func outboxReaders(cards []components.OutboxCard) []queue.Reader {
	var out []queue.Reader
	for _, c := range cards {
		for _, t := range c.Tables {
			out = append(out, t.T.Reader())
		}
		for _, sl := range c.Slots {
			out = append(out, sl.S.Reader())
		}
	}
	return out
}

func (s *Server) outboxPage(c echo.Context) error {
	card, err := s.outboxParam(c)
	if err != nil {
		return err
	}
	d := components.OutboxData{
		Chrome: s.chrome(c, card.Source, "overview"), Card: card,
		HistoryURL: "/api/v1/outbox/" + url.PathEscape(card.Source) + "/history", Range: chartRange(c),
	}
	d.LastPoll = components.Ago(card.LastPoll, d.Chrome.Now.T)
	d.Links.Grafana = grafanaOutbox.link(s.opts.GrafanaURL, card.Source)
	if partial(c) {
		return render(c, http.StatusOK, components.OutboxPartial(d))
	}
	return render(c, http.StatusOK, components.Outbox(d))
}

// outboxParam finds the outbox source named by the :source path parameter.
func (s *Server) outboxParam(c echo.Context) (components.OutboxCard, error) {
	name, err := pathParam(c, "source")
	if err != nil {
		return components.OutboxCard{}, err
	}
	for _, card := range s.outboxCards(c, true) {
		if card.Source == name {
			return card, nil
		}
	}
	return components.OutboxCard{}, echo.NewHTTPError(http.StatusNotFound, "no such outbox source")
}

func lagOrZero(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// outboxTableJSON is an outbox table in API responses.
type outboxTableJSON struct {
	Source                  string       `json:"source"`
	Table                   string       `json:"table"`
	Status                  queue.Status `json:"status"`
	StatusReason            string       `json:"status_reason,omitempty"`
	StatusSince             *time.Time   `json:"status_since,omitempty"`
	Pending                 int64        `json:"pending"`
	OldestPendingAgeSeconds float64      `json:"oldest_pending_age_seconds"`
	PublishRate             *float64     `json:"publish_rate"`
	Error                   string       `json:"error,omitempty"`
}

type slotJSON struct {
	Source       string       `json:"source"`
	Slot         string       `json:"slot"`
	Status       queue.Status `json:"status"`
	StatusReason string       `json:"status_reason,omitempty"`
	StatusSince  *time.Time   `json:"status_since,omitempty"`
	LagBytes     *int64       `json:"lag_bytes"` // null when unknown
	Active       bool         `json:"active"`
	Error        string       `json:"error,omitempty"`
}

// apiOutbox lists every outbox table and replication slot, worst first.
func (s *Server) apiOutbox(c echo.Context) error {
	tables, slots := []outboxTableJSON{}, []slotJSON{}
	for _, card := range s.outboxCards(c, false) {
		for _, t := range card.Tables {
			tj := outboxTableJSON{
				Source: card.Source, Table: t.T.Table, Status: t.Status, StatusReason: t.Reason, StatusSince: sinceJSON(t.T.StatusSince),
				Pending: t.T.Pending, OldestPendingAgeSeconds: t.T.OldestPendingAge.Seconds(), Error: t.T.Err,
			}
			if t.T.HasPublishRate {
				r := t.T.PublishRate
				tj.PublishRate = &r
			}
			tables = append(tables, tj)
		}
		for _, sl := range card.Slots {
			sj := slotJSON{
				Source: card.Source, Slot: sl.S.Slot, Status: sl.Status, StatusReason: sl.Reason, StatusSince: sinceJSON(sl.S.StatusSince),
				Active: sl.S.Active, Error: sl.S.Err,
			}
			if sl.S.LagUnknown == "" {
				lag := sl.S.LagBytes
				sj.LagBytes = &lag
			}
			slots = append(slots, sj)
		}
	}
	// Worst first across sources, as /api/v1/groups lists groups.
	slices.SortStableFunc(tables, func(a, b outboxTableJSON) int {
		if d := b.Status.Severity() - a.Status.Severity(); d != 0 {
			return d
		}
		return cmpInt(b.Pending, a.Pending)
	})
	slices.SortStableFunc(slots, func(a, b slotJSON) int {
		if d := b.Status.Severity() - a.Status.Severity(); d != 0 {
			return d
		}
		return cmpInt(lagOrZero(b.LagBytes), lagOrZero(a.LagBytes))
	})
	return c.JSON(http.StatusOK, map[string]any{"tables": tables, "slots": slots})
}

type outboxPointJSON struct {
	At                      time.Time `json:"at"`
	Pending                 int64     `json:"pending"`
	OldestPendingAgeSeconds float64   `json:"oldest_pending_age_seconds"`
}

type slotPointJSON struct {
	At       time.Time `json:"at"`
	LagBytes int64     `json:"lag_bytes"`
	Active   bool      `json:"active"`
}

type tableHistoryJSON struct {
	Table   string            `json:"table"`
	History []outboxPointJSON `json:"history"`
}

type slotHistoryJSON struct {
	Slot    string          `json:"slot"`
	History []slotPointJSON `json:"history"`
}

// apiOutboxHistory is the outbox page's chart data: the kept history of
// every table and slot of one source, in one answer.
func (s *Server) apiOutboxHistory(c echo.Context) error {
	card, err := s.outboxParam(c)
	if err != nil {
		return err
	}
	hist := s.mon(c)
	tables, slots := []tableHistoryJSON{}, []slotHistoryJSON{}
	for _, t := range card.Tables {
		th := tableHistoryJSON{Table: t.T.Table, History: []outboxPointJSON{}}
		for _, p := range hist.OutboxHistory(card.Source, t.T.Table) {
			th.History = append(th.History, outboxPointJSON{p.At, p.Pending, p.OldestPendingAge.Seconds()})
		}
		tables = append(tables, th)
	}
	for _, sl := range card.Slots {
		sh := slotHistoryJSON{Slot: sl.S.Slot, History: []slotPointJSON{}}
		for _, p := range hist.SlotHistory(card.Source, sl.S.Slot) {
			sh.History = append(sh.History, slotPointJSON{p.At, p.LagBytes, p.Active})
		}
		slots = append(slots, sh)
	}
	return c.JSON(http.StatusOK, map[string]any{"source": card.Source, "tables": tables, "slots": slots})
}
