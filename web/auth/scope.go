package auth

import (
	"context"
	"fmt"

	"github.com/labstack/echo/v4"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// Monitor is what the web server reads: the collectors' latest state.
type Monitor interface {
	Snapshots() []*queue.Snapshot
	Statuses() []queue.SourceStatus
	Ready() bool
	// ReaderHistory is the kept history of one reader, of any broker: what
	// the overview's cards and rows and a group's chart draw.
	ReaderHistory(k queue.ReaderKey) []queue.ReaderPoint
	DLQHistory(id string) []queue.DLQPoint
	// The outbox page's chart draws more than a reader's point (a table's
	// oldest age, a slot's bytes and activity): its own history.
	OutboxHistory(source, table string) []queue.OutboxPoint
	SlotHistory(source, slot string) []queue.SlotPoint
}

// DLQService is what the DLQ API and pages need from the replay engine;
// *dlqreplay.Service implements it. Browse never changes a DLQ; Start runs
// a job in the background; Wait lets a dry run answer with its receipt.
type DLQService interface {
	Browse(ctx context.Context, dlqID string, opts dlqreplay.BrowseOptions) (dlqreplay.Page, error)
	Start(ctx context.Context, req dlqreplay.Request) (dlqreplay.Job, error)
	Wait(ctx context.Context, id string) (dlqreplay.Receipt, error)
	Job(ctx context.Context, id string) (dlqreplay.Job, error)
	Receipt(ctx context.Context, id string) (dlqreplay.Receipt, error)
	// ReceiptOf is the receipt of a job just read with Job.
	ReceiptOf(ctx context.Context, j dlqreplay.Job) (dlqreplay.Receipt, error)
	Cancel(id string) error
	Jobs(ctx context.Context, q dlqreplay.JobQuery) ([]dlqreplay.Job, error)
	Archived(ctx context.Context, q dlqreplay.ArchiveQuery) ([]dlqreplay.Archived, error)
	StartRestore(ctx context.Context, req dlqreplay.RestoreRequest) (dlqreplay.Job, error)
	Preview(ctx context.Context, req dlqreplay.Request) (dlqreplay.Preview, error)
}

// ConsumerHistorian is the part of a Monitor that keeps JetStream consumer
// history (the collector does): the consumer page's specific section, since
// its chart draws ack pending beside what a reader's history keeps. It is optional, so monitors that watch no
// NATS cluster need not implement it.
type ConsumerHistorian interface {
	ConsumerHistory(cluster, stream, consumer string) []queue.ConsumerPoint
}

// Scoped is m as the request's principal may see it (see mon).
func Scoped(c echo.Context, m Monitor) Monitor {
	p := PrincipalOf(c.Request().Context())
	if !p.scoped() {
		return m
	}
	return scopedMonitor{Monitor: m, p: p}
}

type scopedMonitor struct {
	Monitor
	p Principal
}

func (m scopedMonitor) sees(r queue.Reader) bool { return m.p.MayReader(config.RoleViewer, r) }

func (m scopedMonitor) Snapshots() []*queue.Snapshot {
	var out []*queue.Snapshot
	for _, snap := range m.Monitor.Snapshots() {
		if v := m.view(snap); v != nil {
			out = append(out, v)
		}
	}
	return out
}

// view is snap cut to what the principal sees; nil when that is nothing.
func (m scopedMonitor) view(snap *queue.Snapshot) *queue.Snapshot {
	if m.p.may(config.RoleViewer, snap.Cluster, "", "") {
		return snap
	}
	// The readers it sees, of every kind (queue.Snapshot.WithReaders), and
	// of the rest only what names nothing another team owns.
	v := snap.WithReaders(m.sees)
	v.Broker, v.Cluster, v.Time, v.Duration = snap.Broker, snap.Cluster, snap.Time, snap.Duration
	v.Err, v.Partial, v.PolledBy = snap.Err, hidePartial(snap.Partial), snap.PolledBy
	for _, d := range snap.DLQs {
		if m.p.MayDLQ(config.RoleViewer, d.ID()) {
			v.DLQs = append(v.DLQs, d)
		}
	}
	// Topic offsets and streams only as far as a visible reader reads them.
	topics := map[string]bool{}
	for i := range v.Groups {
		for _, p := range v.Groups[i].Partitions {
			topics[p.Topic] = true
		}
	}
	for _, p := range snap.Partitions {
		if topics[p.Topic] {
			v.Partitions = append(v.Partitions, p)
		}
	}
	streams := map[string]bool{}
	for _, c := range v.Consumers {
		streams[c.Stream] = true
	}
	for _, st := range snap.Streams {
		if streams[st.Name] {
			v.Streams = append(v.Streams, st)
		}
	}
	if v.ReaderCount()+len(v.DLQs) == 0 {
		return nil
	}
	return v
}

// Statuses keeps the sources the principal sees anything of.
func (m scopedMonitor) Statuses() []queue.SourceStatus {
	seen := map[string]bool{}
	for _, snap := range m.Snapshots() {
		seen[string(snap.Broker)+":"+snap.Cluster] = true
	}
	var out []queue.SourceStatus
	for _, st := range m.Monitor.Statuses() {
		whole := m.p.may(config.RoleViewer, st.Cluster, "", "")
		if !whole && !seen[string(st.Broker)+":"+st.Cluster] {
			continue
		}
		if !whole {
			st.Partial = hidePartial(st.Partial)
		}
		out = append(out, st)
	}
	return out
}

// hidePartial is what one who sees part of a cluster reads of the parts
// its last poll could not read: how many, never which, as each entry names
// a group, queue or stream that may be another team's.
func hidePartial(partial []string) []string {
	if len(partial) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d part(s) of this source could not be read; which ones is shown to viewers of the whole cluster", len(partial))}
}

func (m scopedMonitor) ReaderHistory(k queue.ReaderKey) []queue.ReaderPoint {
	if !m.sees(queue.Reader{Broker: k.Broker, Cluster: k.Cluster, Scope: k.Scope, Name: k.Name}) {
		return nil
	}
	return m.Monitor.ReaderHistory(k)
}

func (m scopedMonitor) DLQHistory(id string) []queue.DLQPoint {
	if !m.p.MayDLQ(config.RoleViewer, id) {
		return nil
	}
	return m.Monitor.DLQHistory(id)
}

func (m scopedMonitor) OutboxHistory(source, table string) []queue.OutboxPoint {
	if !m.sees(queue.Reader{Broker: queue.Outbox, Cluster: source, Name: table}) {
		return nil
	}
	return m.Monitor.OutboxHistory(source, table)
}

func (m scopedMonitor) SlotHistory(source, slot string) []queue.SlotPoint {
	if !m.sees(queue.Reader{Broker: queue.Outbox, Cluster: source, Name: slot}) {
		return nil
	}
	return m.Monitor.SlotHistory(source, slot)
}

// ConsumerHistory is the JetStream consumer history of a consumer the
// principal sees (consumerHistorian, when the Monitor keeps it).
func (m scopedMonitor) ConsumerHistory(cluster, stream, consumer string) []queue.ConsumerPoint {
	h, ok := m.Monitor.(ConsumerHistorian)
	if !ok || !m.sees(queue.Reader{Broker: queue.NATS, Cluster: cluster, Scope: stream, Name: consumer}) {
		return nil
	}
	return h.ConsumerHistory(cluster, stream, consumer)
}
