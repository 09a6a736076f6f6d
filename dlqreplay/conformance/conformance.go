// Package conformance is the one table of cases every dlqreplay Backend
// passes: conservation under each fault the broker can have, dry run,
// filters, poison, named targets, delete and restore, cancel, and one job
// per DLQ across instances. A backend's test supplies a World for its
// broker — real RabbitMQ, kfake — and calls Run; adding a broker means
// writing its World, not new cases.
//
// Messages are known by a test id carried in the TestIDHeader header, so
// the cases never depend on how a broker names messages.
package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/store"
)

// TestIDHeader names the header that carries a test message's id.
const TestIDHeader = "qw-test-id"

// Message is a dead letter a case puts in the DLQ.
type Message struct {
	ID     string
	Tenant string // the "tenant" header
	// Origin is the queue or topic the message died in (default: Source).
	Origin string
	// ReplayCount, when above 0, is set in queue.HeaderReplayCount as if
	// queuewatch had replayed the message that often already.
	ReplayCount int
}

// Arrival is a copy that reached a queue or topic.
type Arrival struct {
	ID          string // TestIDHeader
	ReplayCount string // queue.HeaderReplayCount
	ReplayID    string // queue.HeaderReplayID
}

// World is one broker's fixture. Each call of Run's cases gets a fresh
// World from the factory: a DLQ whose messages failed in Source, and
// another existing queue or topic, Other.
type World interface {
	// Service is a Service over the backend under test; each call is
	// another queuewatch instance (its own backend and audit store) on
	// the same broker.
	Service(t *testing.T, maxReplays int) *dlqreplay.Service
	// DLQ is the DLQ's ID.
	DLQ() string
	// Source is the queue or topic the dead letters came from; Other is a
	// second one, for moves.
	Source() string
	Other() string
	// DeadLetter adds dead letters from Source to the DLQ, in order.
	DeadLetter(t *testing.T, msgs ...Message)
	// InDLQ lists the test ids of the messages still to be replayed, in
	// DLQ order, leaving the DLQ as it is.
	InDLQ(t *testing.T) []string
	// Arrived takes the copies that reached the queue or topic name since
	// the last call.
	Arrived(t *testing.T, name string) []Arrival
	// Faults are the faults this broker can suffer while a job runs.
	Faults() []Fault
	// ServiceOn is a Service like Service's (no max_replays) over store
	// instead of a store of its own, with its crash: called while a job
	// runs, crash makes the service's process die as kill -9 would — its
	// broker I/O stops at once, nothing in flight is settled, and the
	// broker gives back what it held the way it does for a dead client
	// (RabbitMQ: its connections cut; SQS: its requests cut off until the
	// visibility timeout; NATS: its connection dropped; Kafka: nothing it
	// had not committed ever commits). Writes to store are the case's to
	// stop.
	ServiceOn(t *testing.T, auditStore dlqreplay.Store) (svc *dlqreplay.Service, crash func(t *testing.T))
}

// Fault is one way a broker fails in the middle of a job.
type Fault struct {
	Name string
	// Inject breaks things while the job runs; Heal (optional) repairs
	// them after the job ended, before the messages are counted.
	Inject func(t *testing.T)
	Heal   func(t *testing.T)
}

// Run runs every case against fresh worlds from newWorld.
func Run(t *testing.T, newWorld func(t *testing.T) World) {
	cases := []struct {
		name string
		run  func(t *testing.T, w World)
	}{
		{"replay all", replayAll},
		{"dry run changes nothing", dryRun},
		{"filters and limit", filters},
		{"selected ids", selectedIDs},
		{"a CEL selection equals the selection by hand", celSelection},
		{"poison skipped", poison},
		{"move to a named target", move},
		{"missing target moves nothing", missingTarget},
		{"a message whose origin is gone fails alone", originGone},
		{"delete archives then restore", deleteRestore},
		{"two instances each restore their own delete", restoreTwoInstances},
		{"a restore and a replay of one dlq exclude each other", restoreReplayConflict},
		{"cancel keeps every message", cancel},
		{"one job per dlq across instances", conflict},
		{"faults lose nothing", faults},
		{"jobs after a crash name its duplicates", crash},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newWorld(t)) })
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// messages makes n dead letters with ids prefix-0000… and tenants a, b, c
// in turn.
func messages(prefix string, n int) []Message {
	out := make([]Message, n)
	for i := range out {
		out[i] = Message{ID: fmt.Sprintf("%s-%04d", prefix, i), Tenant: string(rune('a' + i%3))}
	}
	return out
}

func ids(ms []Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func arrivedIDs(as []Arrival) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ID
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func count(r dlqreplay.Receipt, res dlqreplay.Result) int {
	n := 0
	for _, o := range r.Outcomes {
		if o.Result == res {
			n++
		}
	}
	return n
}

func run(t *testing.T, svc *dlqreplay.Service, req dlqreplay.Request) dlqreplay.Receipt {
	t.Helper()
	r, err := svc.Run(ctxT(t), req)
	if err != nil {
		t.Fatalf("run %+v: %v", req, err)
	}
	return r
}

func replayAll(t *testing.T, w World) {
	svc := w.Service(t, 0)
	all := messages("all", 20)
	w.DeadLetter(t, all...)
	r := run(t, svc, dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}})
	if r.Job.State != dlqreplay.StateSucceeded || r.Job.Progress.Moved != 20 || count(r, dlqreplay.ResultMoved) != 20 {
		t.Fatalf("receipt %+v", r.Job)
	}
	got := w.Arrived(t, w.Source())
	if !slices.Equal(sorted(arrivedIDs(got)), ids(all)) {
		t.Fatalf("arrived %v, want %v", arrivedIDs(got), ids(all))
	}
	seen := map[string]bool{}
	for _, a := range got {
		if a.ReplayCount != "1" || a.ReplayID == "" || seen[a.ReplayID] {
			t.Errorf("copy %s: replay count %q, replay id %q (unique ids wanted)", a.ID, a.ReplayCount, a.ReplayID)
		}
		seen[a.ReplayID] = true
	}
	if left := w.InDLQ(t); len(left) != 0 {
		t.Fatalf("dlq still holds %v", left)
	}
	// A replayed message that dies again is replayed with its count bumped.
	w.DeadLetter(t, Message{ID: "again", ReplayCount: 1})
	run(t, svc, dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}})
	if a := w.Arrived(t, w.Source()); len(a) != 1 || a[0].ReplayCount != "2" {
		t.Fatalf("second replay arrived %+v, want one copy with count 2", a)
	}
}

func dryRun(t *testing.T, w World) {
	svc := w.Service(t, 0)
	all := messages("dry", 10)
	w.DeadLetter(t, all...)
	for _, action := range []dlqreplay.Action{dlqreplay.ActionReplay, dlqreplay.ActionDelete} {
		r := run(t, svc, dlqreplay.Request{DLQ: w.DLQ(), Action: action, DryRun: true, Selection: dlqreplay.Selection{All: true}})
		want := dlqreplay.ResultWouldMove
		if action == dlqreplay.ActionDelete {
			want = dlqreplay.ResultWouldDelete
		}
		if r.Job.State != dlqreplay.StateSucceeded || count(r, want) != 10 || !r.Job.DryRun ||
			r.Job.Progress.Moved != 0 || r.Job.Progress.WouldMove != 10 || r.Job.Progress.Remaining != 0 {
			t.Fatalf("%s dry run: %+v (a dry run moves nothing and would move 10)", action, r.Job)
		}
		if left := w.InDLQ(t); !slices.Equal(left, ids(all)) {
			t.Fatalf("%s dry run changed the dlq: %v", action, left)
		}
		if a := w.Arrived(t, w.Source()); len(a) != 0 {
			t.Fatalf("%s dry run sent %v", action, arrivedIDs(a))
		}
	}
}

func filters(t *testing.T, w World) {
	svc := w.Service(t, 0)
	all := messages("f", 12)
	w.DeadLetter(t, all...)
	r := run(t, svc, dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{Headers: map[string]string{"tenant": "b"}, Limit: 3}})
	want := []string{"f-0001", "f-0004", "f-0007"}
	if got := sorted(arrivedIDs(w.Arrived(t, w.Source()))); !slices.Equal(got, want) {
		t.Fatalf("moved %v, want %v (receipt %+v)", got, want, r.Job.Progress)
	}
	var left []string
	for _, id := range ids(all) {
		if !slices.Contains(want, id) {
			left = append(left, id)
		}
	}
	if got := w.InDLQ(t); !slices.Equal(got, left) {
		t.Fatalf("dlq holds %v, want %v in order", got, left)
	}
}

// messageIDs browses the DLQ and maps test ids to message ids.
func messageIDs(t *testing.T, svc *dlqreplay.Service, dlq string) map[string]string {
	t.Helper()
	p, err := svc.Browse(ctxT(t), dlq, dlqreplay.BrowseOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range p.Messages {
		v, _ := m.Header(TestIDHeader)
		out[string(v)] = m.ID
	}
	return out
}

func selectedIDs(t *testing.T, w World) {
	svc := w.Service(t, 0)
	w.DeadLetter(t, messages("s", 6)...)
	byTest := messageIDs(t, svc, w.DLQ())
	sel := dlqreplay.Selection{IDs: []string{byTest["s-0002"], byTest["s-0005"]}}
	r := run(t, svc, dlqreplay.Request{DLQ: w.DLQ(), Selection: sel})
	if got := sorted(arrivedIDs(w.Arrived(t, w.Source()))); !slices.Equal(got, []string{"s-0002", "s-0005"}) {
		t.Fatalf("moved %v (receipt %+v)", got, r.Job.Progress)
	}
	if got := w.InDLQ(t); !slices.Equal(got, []string{"s-0000", "s-0001", "s-0003", "s-0004"}) {
		t.Fatalf("dlq holds %v", got)
	}
	// The job keeps its ids; a list of jobs carries only their count.
	if j, err := svc.Job(ctxT(t), r.Job.ID); err != nil || !slices.Equal(j.Selection.IDs, sel.IDs) || j.Selection.IDCount != 2 {
		t.Fatalf("job's selection = %+v, %v; want ids %v", j.Selection, err, sel.IDs)
	}
	jobs, err := svc.Jobs(ctxT(t), dlqreplay.JobQuery{DLQ: w.DLQ()})
	if err != nil || len(jobs) == 0 || jobs[0].ID != r.Job.ID || jobs[0].Selection.IDs != nil || jobs[0].Selection.IDCount != 2 {
		t.Fatalf("listed jobs = %+v, %v; want the job with id_count 2 and no ids", jobs, err)
	}
}

// celSelection: a CEL selection (Selection.Where) picks what the same
// selection written by hand in Go over the browsed messages picks, in a
// browse filter, a dry run and a replay.
func celSelection(t *testing.T, w World) {
	svc := w.Service(t, 0)
	all := messages("cel", 12)
	w.DeadLetter(t, all...)
	where := `headers["tenant"] != "b" && !value.id.endsWith("3") && age >= duration("0s") && failure.source != ""`
	p, err := svc.Browse(ctxT(t), w.DLQ(), dlqreplay.BrowseOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var hand []string
	byMsgID := map[string]string{}
	for _, m := range p.Messages {
		id, _ := m.Header(TestIDHeader)
		tenant, _ := m.Header("tenant")
		byMsgID[m.ID] = string(id)
		var body struct{ ID string }
		if json.Unmarshal(m.Body, &body) == nil && string(tenant) != "b" && !strings.HasSuffix(body.ID, "3") &&
			!m.Timestamp.After(time.Now()) && m.Death.Source() != "" {
			hand = append(hand, string(id))
		}
	}
	want := []string{"cel-0000", "cel-0002", "cel-0005", "cel-0006", "cel-0008", "cel-0009", "cel-0011"}
	if !slices.Equal(sorted(hand), want) {
		t.Fatalf("by hand %v, want %v (the fixture changed?)", hand, want)
	}
	filtered, err := svc.Browse(ctxT(t), w.DLQ(), dlqreplay.BrowseOptions{Limit: 50, Where: where})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range filtered.Messages {
		got = append(got, byMsgID[m.ID])
	}
	if !slices.Equal(got, hand) || filtered.Scanned != len(all) {
		t.Fatalf("filtered browse %v after %d read, want %v after %d", got, filtered.Scanned, hand, len(all))
	}
	sel := dlqreplay.Selection{Where: where}
	r := run(t, svc, dlqreplay.Request{DLQ: w.DLQ(), DryRun: true, Selection: sel})
	got = nil
	for _, o := range r.Outcomes {
		if o.Result == dlqreplay.ResultWouldMove {
			got = append(got, byMsgID[o.MessageID])
		}
	}
	if !slices.Equal(sorted(got), want) {
		t.Fatalf("dry run would move %v, want %v", got, want)
	}
	run(t, svc, dlqreplay.Request{DLQ: w.DLQ(), Selection: sel})
	if got := sorted(arrivedIDs(w.Arrived(t, w.Source()))); !slices.Equal(got, want) {
		t.Fatalf("replayed %v, want %v", got, want)
	}
	var left []string
	for _, id := range ids(all) {
		if !slices.Contains(want, id) {
			left = append(left, id)
		}
	}
	if got := w.InDLQ(t); !slices.Equal(got, left) {
		t.Fatalf("dlq holds %v, want %v in order", got, left)
	}
	_, err = svc.Run(ctxT(t), dlqreplay.Request{DLQ: w.DLQ(), DryRun: true, Selection: dlqreplay.Selection{Where: `value.id ==`}})
	if !errors.Is(err, dlqreplay.ErrInvalidRequest) || !strings.Contains(err.Error(), "line 1, column 12") {
		t.Fatalf("a bad expression: %v, want an invalid request naming line 1, column 12", err)
	}
}

func poison(t *testing.T, w World) {
	svc := w.Service(t, 3)
	msgs := messages("p", 6)
	for i := range msgs {
		if i%2 == 0 {
			msgs[i].ReplayCount = 3 + i
		}
	}
	w.DeadLetter(t, msgs...)
	r := run(t, svc, dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}})
	if count(r, dlqreplay.ResultSkipped) != 3 || count(r, dlqreplay.ResultMoved) != 3 {
		t.Fatalf("receipt %+v", r.Job.Progress)
	}
	if got := sorted(arrivedIDs(w.Arrived(t, w.Source()))); !slices.Equal(got, []string{"p-0001", "p-0003", "p-0005"}) {
		t.Fatalf("moved %v", got)
	}
	if got := w.InDLQ(t); !slices.Equal(got, []string{"p-0000", "p-0002", "p-0004"}) {
		t.Fatalf("poison left in the dlq: %v", got)
	}
}

func move(t *testing.T, w World) {
	svc := w.Service(t, 0)
	w.DeadLetter(t, messages("m", 5)...)
	r := run(t, svc, dlqreplay.Request{
		DLQ: w.DLQ(), Action: dlqreplay.ActionMove,
		Target: dlqreplay.Target{Name: w.Other()}, Selection: dlqreplay.Selection{All: true},
	})
	if r.Job.Progress.Moved != 5 {
		t.Fatalf("receipt %+v", r.Job)
	}
	for _, o := range r.Outcomes {
		if !containsName(o.Target, w.Other()) {
			t.Errorf("outcome target %q does not name %q", o.Target, w.Other())
		}
	}
	if got := w.Arrived(t, w.Other()); len(got) != 5 {
		t.Fatalf("%d arrived in %s", len(got), w.Other())
	}
	if got := w.Arrived(t, w.Source()); len(got) != 0 {
		t.Fatalf("%d arrived in the source", len(got))
	}
}

func containsName(target, name string) bool {
	return target == name || len(target) > len(name) && target[len(target)-len(name)-1:] == "/"+name
}

func missingTarget(t *testing.T, w World) {
	svc := w.Service(t, 0)
	all := messages("x", 4)
	w.DeadLetter(t, all...)
	_, err := svc.Run(ctxT(t), dlqreplay.Request{
		DLQ: w.DLQ(), Action: dlqreplay.ActionMove,
		Target: dlqreplay.Target{Name: "qw-no-such-target"}, Selection: dlqreplay.Selection{All: true},
	})
	if !errors.Is(err, dlqreplay.ErrTargetMissing) {
		t.Fatalf("err = %v, want ErrTargetMissing", err)
	}
	if got := w.InDLQ(t); !slices.Equal(got, ids(all)) {
		t.Fatalf("dlq holds %v", got)
	}
}

func originGone(t *testing.T, w World) {
	svc := w.Service(t, 0)
	msgs := messages("o", 6)
	msgs[1].Origin, msgs[4].Origin = "qw-gone", "qw-gone"
	w.DeadLetter(t, msgs...)
	for _, dry := range []bool{true, false} {
		r := run(t, svc, dlqreplay.Request{DLQ: w.DLQ(), DryRun: dry, Selection: dlqreplay.Selection{All: true}})
		want := dlqreplay.ResultMoved
		if dry {
			want = dlqreplay.ResultWouldMove
		}
		if count(r, dlqreplay.ResultFailed) != 2 || count(r, want) != 4 || len(r.Outcomes) != 6 {
			t.Fatalf("dry run %v: %d outcomes %+v", dry, len(r.Outcomes), r.Job.Progress)
		}
		for _, o := range r.Outcomes {
			if o.Result == dlqreplay.ResultFailed && !strings.Contains(o.Reason, "qw-gone") {
				t.Errorf("failure reason %q does not name the missing target", o.Reason)
			}
		}
	}
	if got := sorted(arrivedIDs(w.Arrived(t, w.Source()))); !slices.Equal(got, []string{"o-0000", "o-0002", "o-0003", "o-0005"}) {
		t.Fatalf("moved %v", got)
	}
	if got := w.InDLQ(t); !slices.Equal(got, []string{"o-0001", "o-0004"}) {
		t.Fatalf("dlq holds %v", got)
	}
}

func deleteRestore(t *testing.T, w World) {
	svc := w.Service(t, 0)
	all := messages("d", 7)
	w.DeadLetter(t, all...)
	r := run(t, svc, dlqreplay.Request{DLQ: w.DLQ(), Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}})
	if count(r, dlqreplay.ResultDeleted) != 7 {
		t.Fatalf("receipt %+v", r.Job)
	}
	if got := w.InDLQ(t); len(got) != 0 {
		t.Fatalf("dlq holds %v after delete", got)
	}
	ref, _ := dlqreplay.ParseID(w.DLQ())
	ref.Name = w.Source()
	rr, err := svc.Restore(ctxT(t), dlqreplay.RestoreRequest{JobID: r.Job.ID, Target: ref.ID()})
	if err != nil || count(rr, dlqreplay.ResultMoved) != 7 {
		t.Fatalf("restore: %v, %+v", err, rr.Job)
	}
	if got := sorted(arrivedIDs(w.Arrived(t, w.Source()))); !slices.Equal(got, ids(all)) {
		t.Fatalf("restored %v", got)
	}
	// Restored again into the same target: each copy the broker stores is
	// named a possible duplicate (one dropped by its dedup id is skipped).
	again, err := svc.Restore(ctxT(t), dlqreplay.RestoreRequest{JobID: r.Job.ID, Target: ref.ID()})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range again.Outcomes {
		if o.Result == dlqreplay.ResultMoved && !o.PossibleDuplicate || o.Result != dlqreplay.ResultMoved && o.Result != dlqreplay.ResultSkipped {
			t.Errorf("restored twice, %s: %s, possible duplicate %v (%s)", o.MessageID, o.Result, o.PossibleDuplicate, o.Reason)
		}
	}
	_ = w.Arrived(t, w.Source()) // take the second copies
}

// slowJob starts a replay of n messages at 50 a second and waits until
// it has moved some.
func slowJob(t *testing.T, w World, svc *dlqreplay.Service, n int) dlqreplay.Job {
	t.Helper()
	w.DeadLetter(t, messages("slow", n)...)
	j, err := svc.Start(ctxT(t), dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}, Rate: 50})
	if err != nil {
		t.Fatal(err)
	}
	waitMoved(t, svc, j.ID, 5)
	return j
}

func waitMoved(t *testing.T, svc *dlqreplay.Service, id string, n int64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		j, err := svc.Job(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Progress.Moved >= n {
			return
		}
		if j.State != dlqreplay.StateRunning {
			t.Fatalf("job ended before moving %d: %+v", n, j)
		}
	}
	t.Fatalf("job %s never moved %d messages", id, n)
}

// restoreTwoInstances: two instances, each with its own audit store (so
// each numbers its archive from 1), delete one message each and restore
// it into the same queue or topic. Both copies must arrive: a broker that
// drops duplicates by id must not take the second restore for the first.
func restoreTwoInstances(t *testing.T, w World) {
	ref, _ := dlqreplay.ParseID(w.DLQ())
	ref.Name = w.Source()
	for _, id := range []string{"first", "second"} {
		svc := w.Service(t, 0)
		w.DeadLetter(t, Message{ID: id})
		r := run(t, svc, dlqreplay.Request{DLQ: w.DLQ(), Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}})
		if count(r, dlqreplay.ResultDeleted) != 1 {
			t.Fatalf("delete %s: receipt %+v", id, r.Job)
		}
		rr, err := svc.Restore(ctxT(t), dlqreplay.RestoreRequest{JobID: r.Job.ID, Target: ref.ID()})
		if err != nil || count(rr, dlqreplay.ResultMoved) != 1 {
			t.Fatalf("restore %s: %v, %+v", id, err, rr.Outcomes)
		}
		if got := arrivedIDs(w.Arrived(t, w.Source())); !slices.Equal(got, []string{id}) {
			t.Fatalf("restore %s reported moved; arrived %v", id, got)
		}
	}
}

// restoreReplayConflict: a restore of messages deleted from the DLQ is
// refused while a replay of the DLQ runs, and a replay while such a
// restore runs; the cancelled restore marks what it restored and nothing
// else, and restoring the rest later completes it.
func restoreReplayConflict(t *testing.T, w World) {
	svc := w.Service(t, 0)
	deleted := messages("del", 20)
	w.DeadLetter(t, deleted...)
	del := run(t, svc, dlqreplay.Request{DLQ: w.DLQ(), Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}})
	if count(del, dlqreplay.ResultDeleted) != len(deleted) {
		t.Fatalf("delete: %+v", del.Job)
	}
	ref, _ := dlqreplay.ParseID(w.DLQ())
	ref.Name = w.Source()
	restore := dlqreplay.RestoreRequest{JobID: del.Job.ID, Target: ref.ID()}

	j := slowJob(t, w, svc, 200)
	var ce *dlqreplay.ConflictError
	if _, err := svc.StartRestore(ctxT(t), restore); !errors.As(err, &ce) || ce.JobID != j.ID {
		t.Fatalf("restore during a replay of its dlq: %v, want a conflict naming %s", err, j.ID)
	}
	if err := svc.Cancel(j.ID); err != nil {
		t.Fatal(err)
	}
	r, err := svc.Wait(ctxT(t), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	accounted(t, w, ids(messages("slow", 200)), w.Source(), r)

	slow := restore
	slow.Rate = 10
	rj, err := svc.StartRestore(ctxT(t), slow)
	if err != nil {
		t.Fatal(err)
	}
	waitMoved(t, svc, rj.ID, 1)
	if _, err := svc.Start(ctxT(t), dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}}); !errors.As(err, &ce) || ce.JobID != rj.ID {
		t.Fatalf("replay during a restore from its dlq: %v, want a conflict naming %s", err, rj.ID)
	}
	if err := svc.Cancel(rj.ID); err != nil {
		t.Fatal(err)
	}
	rr, err := svc.Wait(ctxT(t), rj.ID)
	if err != nil || rr.Job.State != dlqreplay.StateCancelled || rr.Job.Progress.Moved == 0 || rr.Job.Progress.Moved == int64(len(deleted)) {
		t.Fatalf("cancelled restore: %v %+v", err, rr.Job)
	}
	first := arrivedIDs(w.Arrived(t, w.Source()))
	if len(first) != int(rr.Job.Progress.Moved) {
		t.Fatalf("cancelled restore moved %d, %d arrived", rr.Job.Progress.Moved, len(first))
	}
	// What the cancelled restore did not publish is still to restore.
	var rest []int64
	for _, a := range archived(t, svc, w.DLQ()) {
		if a.RestoredAt.IsZero() {
			rest = append(rest, a.ID)
		}
	}
	rest2, err := svc.Restore(ctxT(t), dlqreplay.RestoreRequest{ArchiveIDs: rest, Target: ref.ID()})
	if err != nil || count(rest2, dlqreplay.ResultMoved) != len(deleted)-len(first) {
		t.Fatalf("restore of the rest: %v %+v", err, rest2.Job)
	}
	got := append(first, arrivedIDs(w.Arrived(t, w.Source()))...)
	if !slices.Equal(sorted(got), ids(deleted)) {
		t.Fatalf("restored %v, want each of %v once", sorted(got), ids(deleted))
	}
}

func archived(t *testing.T, svc *dlqreplay.Service, dlq string) []dlqreplay.Archived {
	t.Helper()
	as, err := svc.Archived(ctxT(t), dlqreplay.ArchiveQuery{DLQ: dlq, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return as
}

func cancel(t *testing.T, w World) {
	svc := w.Service(t, 0)
	j := slowJob(t, w, svc, 200)
	if err := svc.Cancel(j.ID); err != nil {
		t.Fatal(err)
	}
	r, err := svc.Wait(ctxT(t), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.State != dlqreplay.StateCancelled || r.Job.Progress.Moved == 0 || r.Job.Progress.Moved >= 200 {
		t.Fatalf("cancelled job %+v", r.Job)
	}
	accounted(t, w, ids(messages("slow", 200)), w.Source(), r)
}

func conflict(t *testing.T, w World) {
	svc := w.Service(t, 0)
	j := slowJob(t, w, svc, 500)
	_, err := svc.Start(ctxT(t), dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}})
	var ce *dlqreplay.ConflictError
	if !errors.As(err, &ce) || ce.JobID != j.ID {
		t.Fatalf("second job in the same instance: %v, want a conflict naming %s", err, j.ID)
	}
	if _, err := svc.Browse(ctxT(t), w.DLQ(), dlqreplay.BrowseOptions{}); !errors.Is(err, dlqreplay.ErrJobRunning) {
		t.Fatalf("browse during a job: %v, want ErrJobRunning", err)
	}
	other := w.Service(t, 0)
	if _, err := other.Start(ctxT(t), dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}}); !errors.Is(err, dlqreplay.ErrJobRunning) {
		t.Fatalf("second job from another instance: %v, want ErrJobRunning", err)
	}
	if err := svc.Cancel(j.ID); err != nil {
		t.Fatal(err)
	}
	r, err := svc.Wait(ctxT(t), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	accounted(t, w, ids(messages("slow", 500)), w.Source(), r)
}

func faults(t *testing.T, w World) {
	fs := w.Faults()
	if len(fs) == 0 {
		t.Fatal("the world names no faults: every broker has some")
	}
	for i, f := range fs {
		t.Run(f.Name, func(t *testing.T) {
			svc := w.Service(t, 0)
			prefix := "fault" + strconv.Itoa(i)
			all := ids(messages(prefix, 300))
			w.DeadLetter(t, messages(prefix, 300)...)
			j, err := svc.Start(ctxT(t), dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}, Rate: 300})
			if err != nil {
				t.Fatal(err)
			}
			waitMoved(t, svc, j.ID, 30)
			f.Inject(t)
			r, err := svc.Wait(ctxT(t), j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if f.Heal != nil {
				f.Heal(t)
			}
			if r.Job.State == dlqreplay.StateSucceeded && r.Job.Progress.Moved == 300 {
				t.Logf("the fault did not stop the job: %+v", r.Job.Progress)
			}
			accounted(t, w, all, w.Source(), r)
			// What the fault left behind is replayed by a second job, once
			// the broker lets go of the first one's lock. The bound is
			// generous: under the full suite on 2 cores SQS messages a cut
			// job held were seen in flight for over 30 s (ElasticMQ, 6 s
			// visibility timeout); a message that never comes back still
			// fails the case.
			again := w.Service(t, 0)
			for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				_, err := again.Run(ctxT(t), dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}})
				if err == nil {
					break
				}
				if !errors.Is(err, dlqreplay.ErrJobRunning) || time.Now().After(deadline) {
					t.Fatalf("second job: %v", err)
				}
			}
			w.Arrived(t, w.Source())
			if left := w.InDLQ(t); len(left) != 0 {
				t.Fatalf("after a second job the dlq holds %v", left)
			}
		})
	}
}

// accounted checks conservation: every message is in the DLQ or arrived
// in target, and no more messages are in two places (or arrived twice)
// than the receipt marks as possible duplicates. It waits for a cut
// connection's unacknowledged messages to return to the DLQ, and for
// messages a lost answer to the world's own reads hid (SQS: a receive
// whose answer was lost, and which the SDK retried, hides its batch).
func accounted(t *testing.T, w World, all []string, target string, r dlqreplay.Receipt) {
	t.Helper()
	arrived := map[string]int{}
	var inDLQ []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		for _, a := range w.Arrived(t, target) {
			arrived[a.ID]++
		}
		inDLQ = w.InDLQ(t)
		if len(missing(all, arrived, inDLQ)) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if lost := missing(all, arrived, inDLQ); len(lost) > 0 {
		t.Errorf("%d messages lost: %v", len(lost), lost)
	}
	seen := maps.Clone(arrived)
	for _, id := range inDLQ {
		seen[id]++
	}
	var dup []string
	for _, id := range all {
		if seen[id] > 1 {
			dup = append(dup, id)
		}
	}
	if len(dup) > int(r.Job.Progress.Duplicates) {
		t.Errorf("%d messages are in two places, the receipt marks %d possible duplicates: %v",
			len(dup), r.Job.Progress.Duplicates, dup)
	}
	t.Logf("job %s (%s): %+v; %d duplicates found", r.Job.State, r.Job.Error, r.Job.Progress, len(dup))
}

func missing(all []string, arrived map[string]int, inDLQ []string) []string {
	var out []string
	for _, id := range all {
		if arrived[id] == 0 && !slices.Contains(inDLQ, id) {
			out = append(out, id)
		}
	}
	return out
}

// crash: queuewatch dies (kill -9) in the middle of a rate-limited replay,
// with copies on the target whose originals it had not acknowledged. It
// writes nothing more; its store, opened again (as the restarted process,
// or another replica sharing it, does), marks the job interrupted; and the
// jobs run after it on that store must name, as possible duplicates in
// their receipts, every message that reached the target twice. A false
// possible duplicate is allowed; a missed one is not.
func crash(t *testing.T, w World) {
	dir := t.TempDir()
	st, err := store.Open(ctxT(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	dying := &dyingStore{Store: st}
	svc, kill := w.ServiceOn(t, dying)
	all := messages("crash", 300)
	w.DeadLetter(t, all...)
	byTest := messageIDs(t, svc, w.DLQ())
	j, err := svc.Start(ctxT(t), dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}, Rate: 100})
	if err != nil {
		t.Fatal(err)
	}
	// Half the copies on the target, then the crash.
	arrived := map[string]int{}
	n := 0
	sent := func() int {
		if c, ok := w.(copyCounter); ok {
			return c.Copies(t, w.Source())
		}
		for _, a := range w.Arrived(t, w.Source()) {
			arrived[a.ID]++
			n++
		}
		return n
	}
	for deadline := time.Now().Add(60 * time.Second); sent() < 150; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d copies arrived", sent())
		}
		if jj, err := svc.Job(ctxT(t), j.ID); err != nil || jj.State != dlqreplay.StateRunning {
			t.Fatalf("job ended before the crash: %v %+v", err, jj)
		}
	}
	dying.die()
	kill(t)

	survivor, err := store.Open(ctxT(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = survivor.Close() })
	if !slices.Contains(survivor.Interrupted, j.ID) {
		t.Fatalf("the reopened store did not find job %s interrupted: %v", j.ID, survivor.Interrupted)
	}
	again, _ := w.ServiceOn(t, survivor)
	flagged := map[string]bool{}
	var jobs []dlqreplay.Progress
	// Jobs run until the DLQ is empty: what the dead job held may come
	// back only after the broker's timeout (SQS: the visibility timeout).
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		r, err := again.Run(ctxT(t), dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}})
		if err != nil && !errors.Is(err, dlqreplay.ErrJobRunning) {
			t.Fatalf("job after the crash: %v", err)
		}
		if err == nil {
			jobs = append(jobs, r.Job.Progress)
			for _, o := range r.Outcomes {
				if o.PossibleDuplicate {
					flagged[o.MessageID] = true
				}
			}
		}
		for _, a := range w.Arrived(t, w.Source()) {
			arrived[a.ID]++
		}
		if err == nil && len(missing(ids(all), arrived, nil)) == 0 && len(w.InDLQ(t)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the crash, jobs %+v left %v in the dlq and never sent %v", jobs, w.InDLQ(t), missing(ids(all), arrived, nil))
		}
	}
	var dups, unnamed []string
	for _, id := range ids(all) {
		if arrived[id] > 1 {
			dups = append(dups, id)
			if !flagged[byTest[id]] {
				unnamed = append(unnamed, id)
			}
		}
	}
	if len(unnamed) > 0 {
		t.Errorf("%d of the %d messages that arrived twice are named by no receipt after the crash: %v", len(unnamed), len(dups), unnamed)
	}
	t.Logf("%d duplicates after the crash, %d flagged; jobs after it: %+v", len(dups), len(flagged), jobs)
}

// copyCounter is a World whose Arrived waits for the copies to stop
// coming (Kafka: a quiet poll ends the read), so it cannot watch a running
// job's copies arrive. Copies counts the copies sent to name so far,
// without taking them; they may not be readable yet (an open
// transaction's).
type copyCounter interface {
	Copies(t *testing.T, name string) int
}

// dyingStore is a process's store that stops taking writes when the
// process dies: the job it ran stays running in the store until another
// process finds it interrupted. It hides the store's replica methods, so
// the dead process holds no lease in it either.
type dyingStore struct {
	dlqreplay.Store
	dead atomic.Bool
}

var errDead = errors.New("the process died")

func (s *dyingStore) die() { s.dead.Store(true) }

func (s *dyingStore) alive() error {
	if s.dead.Load() {
		return errDead
	}
	return nil
}

func (s *dyingStore) CreateJob(ctx context.Context, j dlqreplay.Job) error {
	if err := s.alive(); err != nil {
		return err
	}
	return s.Store.CreateJob(ctx, j)
}

func (s *dyingStore) UpdateJob(ctx context.Context, j dlqreplay.Job, firstSeq int, outcomes []dlqreplay.Outcome) error {
	if err := s.alive(); err != nil {
		return err
	}
	return s.Store.UpdateJob(ctx, j, firstSeq, outcomes)
}

func (s *dyingStore) Archive(ctx context.Context, msgs []dlqreplay.Archived) ([]int64, error) {
	if err := s.alive(); err != nil {
		return nil, err
	}
	return s.Store.Archive(ctx, msgs)
}

func (s *dyingStore) MarkDeleted(ctx context.Context, ids []int64) error {
	if err := s.alive(); err != nil {
		return err
	}
	return s.Store.MarkDeleted(ctx, ids)
}

func (s *dyingStore) MarkRestored(ctx context.Context, ids []int64, target string) error {
	if err := s.alive(); err != nil {
		return err
	}
	return s.Store.MarkRestored(ctx, ids, target)
}
