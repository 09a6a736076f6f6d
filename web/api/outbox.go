package api

import (
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/view"
)

// OutboxTableJSON is an outbox table in API responses.
type OutboxTableJSON struct {
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

// SlotJSON is one replication slot in GET /api/v1/outbox.
type SlotJSON struct {
	Source       string       `json:"source"`
	Slot         string       `json:"slot"`
	Status       queue.Status `json:"status"`
	StatusReason string       `json:"status_reason,omitempty"`
	StatusSince  *time.Time   `json:"status_since,omitempty"`
	LagBytes     *int64       `json:"lag_bytes"` // null when unknown
	Active       bool         `json:"active"`
	Error        string       `json:"error,omitempty"`
}

// Outbox lists every outbox table and replication slot, worst first.
func (s *Server) Outbox(c echo.Context) error {
	tables, slots := []OutboxTableJSON{}, []SlotJSON{}
	for _, card := range s.OutboxCards(c, false) {
		for _, t := range card.Tables {
			tj := OutboxTableJSON{
				Source: card.Source, Table: t.T.Table, Status: t.Status, StatusReason: t.Reason, StatusSince: view.SinceJSON(t.T.StatusSince),
				Pending: t.T.Pending, OldestPendingAgeSeconds: t.T.OldestPendingAge.Seconds(), Error: t.T.Err,
			}
			if t.T.HasPublishRate {
				r := t.T.PublishRate
				tj.PublishRate = &r
			}
			tables = append(tables, tj)
		}
		for _, sl := range card.Slots {
			sj := SlotJSON{
				Source: card.Source, Slot: sl.S.Slot, Status: sl.Status, StatusReason: sl.Reason, StatusSince: view.SinceJSON(sl.S.StatusSince),
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
	slices.SortStableFunc(tables, func(a, b OutboxTableJSON) int {
		if d := b.Status.Severity() - a.Status.Severity(); d != 0 {
			return d
		}
		return view.CmpInt(b.Pending, a.Pending)
	})
	slices.SortStableFunc(slots, func(a, b SlotJSON) int {
		if d := b.Status.Severity() - a.Status.Severity(); d != 0 {
			return d
		}
		return view.CmpInt(view.LagOrZero(b.LagBytes), view.LagOrZero(a.LagBytes))
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

// TableHistoryJSON is one outbox table's kept history.
type TableHistoryJSON struct {
	Table   string            `json:"table"`
	History []outboxPointJSON `json:"history"`
}

// SlotHistoryJSON is one replication slot's kept history.
type SlotHistoryJSON struct {
	Slot    string          `json:"slot"`
	History []slotPointJSON `json:"history"`
}

// OutboxHistory is the outbox page's chart data: the kept history of
// every table and slot of one source, in one answer.
func (s *Server) OutboxHistory(c echo.Context) error {
	card, err := s.OutboxParam(c)
	if err != nil {
		return err
	}
	hist := s.Mon(c)
	tables, slots := []TableHistoryJSON{}, []SlotHistoryJSON{}
	for _, t := range card.Tables {
		th := TableHistoryJSON{Table: t.T.Table, History: []outboxPointJSON{}}
		for _, p := range hist.OutboxHistory(card.Source, t.T.Table) {
			th.History = append(th.History, outboxPointJSON{p.At, p.Pending, p.OldestPendingAge.Seconds()})
		}
		tables = append(tables, th)
	}
	for _, sl := range card.Slots {
		sh := SlotHistoryJSON{Slot: sl.S.Slot, History: []slotPointJSON{}}
		for _, p := range hist.SlotHistory(card.Source, sl.S.Slot) {
			sh.History = append(sh.History, slotPointJSON{p.At, p.LagBytes, p.Active})
		}
		slots = append(slots, sh)
	}
	return c.JSON(http.StatusOK, map[string]any{"source": card.Source, "tables": tables, "slots": slots})
}
