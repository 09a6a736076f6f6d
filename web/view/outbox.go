package view

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// OutboxCards builds one card per outbox source, worst first; within a
// card tables and slots are worst and biggest first. A configured source
// that never answered still gets a card, with its error.
func (s *Server) OutboxCards(c echo.Context, withTrends bool) []components.OutboxCard {
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
	for _, st := range s.Mon(c).Statuses() {
		// The cards list the outbox sources, also those that never
		// answered, which only their status names.
		if st.Broker != queue.Outbox {
			continue
		}
		c := card(st.Cluster)
		c.LastPoll = st.LastPoll
		if st.Polled && !st.Up {
			c.Down, c.LastError, c.Status = true, st.LastError, queue.StatusError
		}
	}
	hist := s.Mon(c)
	for _, snap := range s.Mon(c).Snapshots() {
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
			if d := CmpInt(b.T.Pending, a.T.Pending); d != 0 {
				return d
			}
			return strings.Compare(a.T.Table, b.T.Table)
		})
		slices.SortStableFunc(c.Slots, func(a, b components.SlotRow) int {
			if d := b.Status.Severity() - a.Status.Severity(); d != 0 {
				return d
			}
			if d := CmpInt(b.S.LagBytes, a.S.LagBytes); d != 0 {
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
		if d := CmpInt(b.Pending(), a.Pending()); d != 0 {
			return d
		}
		return strings.Compare(a.Source, b.Source)
	})
	return out
}

func tableSpark(t *queue.OutboxTable, h []queue.OutboxPoint) components.Spark {
	return CountSpark(h, func(p queue.OutboxPoint) int64 { return p.Pending }, "pending rows in "+t.Table, t.Pending)
}

func slotSpark(sl *queue.ReplicationSlot, h []queue.SlotPoint) components.Spark {
	vals := Values(h, func(p queue.SlotPoint) int64 { return p.LagBytes })
	return components.NewSpark(vals, "lag of slot "+sl.Slot+" · now "+queue.HumanBytes(sl.LagBytes))
}

// OutboxReaders are the cards' tables and slots as readers, for the
// overview's outbox banner and "Needs attention".
func OutboxReaders(cards []components.OutboxCard) []queue.Reader {
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

// OutboxParam finds the outbox source named by the :source path parameter.
func (s *Server) OutboxParam(c echo.Context) (components.OutboxCard, error) {
	name, err := PathParam(c, "source")
	if err != nil {
		return components.OutboxCard{}, err
	}
	for _, card := range s.OutboxCards(c, true) {
		if card.Source == name {
			return card, nil
		}
	}
	return components.OutboxCard{}, echo.NewHTTPError(http.StatusNotFound, "no such outbox source")
}

// LagOrZero is *p, or 0 when unknown.
func LagOrZero(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
