package rabbitmq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/dlqreplay"
)

// quorumWorld is a world whose DLQ is a quorum queue with the given
// delivery limit, holding n fresh messages q0…q(n-1).
func quorumWorld(t *testing.T, limit int64, n int) (*world, []string) {
	t.Helper()
	w := newWorld(t, worldOpts{dlqArgs: amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": limit}})
	var want []string
	for i := range n {
		id := fmt.Sprintf("q%d", i)
		want = append(want, id)
		w.publish("", "work.dlq", deadLetter(id, []byte("x"), "rejected", nil))
	}
	return w, want
}

// spend reads every message of q and returns them all, times times: each
// round spends one delivery of every message.
func (w *world) spend(q string, times int) {
	w.t.Helper()
	for range times {
		w.readCounts(q)
	}
}

// readCounts reads every message of q once, in order, and returns their
// ids and the x-delivery-count each carried (0 when absent), then gives
// them all back in one nack, which spends one delivery of each.
func (w *world) readCounts(q string) ([]string, []int64) {
	w.t.Helper()
	ch, err := w.conn.Channel()
	if err != nil {
		w.t.Fatal(err)
	}
	defer ch.Close()
	var ids []string
	var counts []int64
	var last uint64
	for {
		d, ok, err := ch.Get(q, false)
		if err != nil {
			w.t.Fatalf("get %q: %v", q, err)
		}
		if !ok {
			break
		}
		n, _ := toInt(d.Headers["x-delivery-count"])
		ids = append(ids, d.MessageId)
		counts = append(counts, n)
		last = d.DeliveryTag
	}
	if last > 0 {
		if err := ch.Nack(last, true, true); err != nil {
			w.t.Fatal(err)
		}
		// The next read must find them all back.
		returnedDepth(context.Background(), ch, q, len(ids))
	}
	return ids, counts
}

// cliService is a second Service over its own store and backend: another
// process, as the CLI is, that knows nothing the first one saw.
func cliService(t *testing.T, logger *slog.Logger) (*dlqreplay.Service, *Backend) {
	t.Helper()
	w2 := &world{t: t, dir: t.TempDir()}
	w2.openService(worldOpts{})
	if logger != nil {
		w2.be.opts.Logger = logger
	}
	return w2.svc, w2.be
}

// A dry run changes nothing, ever: on a quorum DLQ whose messages are one
// delivery short of their limit, or at it, a dry run from a process that
// has never looked at the queue cannot know their counts without spending
// one, so it reads none of them and says so.
func TestDryRunLeavesQuorumDLQAsItWas(t *testing.T) {
	for _, spent := range []int{2, 3} {
		t.Run(fmt.Sprintf("delivered %d times, limit 3", spent), func(t *testing.T) {
			w, want := quorumWorld(t, 3, 6)
			w.spend("work.dlq", spent)
			svc, _ := cliService(t, nil)
			ctx := ctxT(t, time.Minute)
			r, err := svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}, DryRun: true, Who: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if r.Job.State != dlqreplay.StateSucceeded || r.Job.Note == "" || r.Job.Progress.Remaining != 6 {
				t.Errorf("receipt = %+v, want succeeded, a note and 6 remaining", r.Job)
			}
			gotIDs, counts := w.readCounts("work.dlq")
			if !slices.Equal(gotIDs, want) {
				t.Fatalf("dlq after dry run = %v, want %v in order", gotIDs, want)
			}
			for i, c := range counts {
				if c != int64(spent) {
					t.Errorf("message %s x-delivery-count = %d after the dry run, was %d", gotIDs[i], c, spent)
				}
			}
		})
	}
}

// A dry run in a process that has read the queue and knows every message
// can be read once more without reaching the limit does read it.
func TestDryRunReadsWhatItKnowsIsSafe(t *testing.T) {
	w, _ := quorumWorld(t, 5, 4)
	ctx := ctxT(t, time.Minute)
	if _, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{Limit: 10}); err != nil {
		t.Fatal(err)
	}
	r, err := w.svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}, DryRun: true, Who: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.Progress.WouldMove != 4 || r.Job.Progress.Moved != 0 || r.Job.Note != "" {
		t.Fatalf("receipt = %+v, want 4 would-move and no note", r.Job)
	}
	if _, counts := w.readCounts("work.dlq"); !slices.Equal(counts, []int64{2, 2, 2, 2}) {
		t.Fatalf("counts = %v, want one browse and one dry run spent", counts)
	}
}

// The third browse of a limit-3 quorum DLQ would bring its messages to the
// limit: it must not read the queue. Each page says how many safe browses
// are left.
func TestBrowseStopsBeforeTheLastSafeDelivery(t *testing.T) {
	w, want := quorumWorld(t, 3, 5)
	ctx := ctxT(t, time.Minute)
	for i, left := range []int{1, 0} {
		p, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{Limit: 5})
		if err != nil {
			t.Fatalf("browse %d: %v", i+1, err)
		}
		if p.SafeBrowsesLeft == nil || *p.SafeBrowsesLeft != left || len(p.Messages) != 5 || !p.CachedAt.IsZero() {
			t.Fatalf("browse %d: %d messages, safe browses left %v, cached %v; want 5, %d, not cached",
				i+1, len(p.Messages), p.SafeBrowsesLeft, p.CachedAt, left)
		}
	}
	// The same page again comes from the last read, marked as such.
	p, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{Limit: 5})
	if err != nil || p.CachedAt.IsZero() || len(p.Messages) != 5 || p.SafeBrowsesLeft == nil || *p.SafeBrowsesLeft != 0 {
		t.Fatalf("third browse = %d messages, cached %v, left %v, err %v; want the cached page", len(p.Messages), p.CachedAt, p.SafeBrowsesLeft, err)
	}
	// Another page of the same messages is refused without reading.
	if _, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{Limit: 2}); !errors.Is(err, dlqreplay.ErrDeliveryLimit) {
		t.Fatalf("other page: %v, want ErrDeliveryLimit", err)
	}
	gotIDs, counts := w.readCounts("work.dlq")
	if !slices.Equal(gotIDs, want) || !slices.Equal(counts, []int64{2, 2, 2, 2, 2}) {
		t.Fatalf("dlq = %v with counts %v, want %v each delivered twice", gotIDs, counts, want)
	}
}

// What the guard remembers follows the queue: once the CLI (another
// process) emptied the DLQ, browsing answers an empty page, not a stale
// refusal.
func TestGuardForgetsWhatLeftTheQueue(t *testing.T) {
	w, _ := quorumWorld(t, 3, 3)
	ctx := ctxT(t, time.Minute)
	for range 2 {
		if _, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{Limit: 3}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{Limit: 1}); !errors.Is(err, dlqreplay.ErrDeliveryLimit) {
		t.Fatalf("browse at the limit: %v, want ErrDeliveryLimit", err)
	}
	cli, _ := cliService(t, nil)
	r, err := cli.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}, Who: "cli"})
	if err != nil || r.Job.Progress.Moved != 3 {
		t.Fatalf("cli replay = %+v, %v", r.Job, err)
	}
	for _, o := range []dlqreplay.BrowseOptions{{Limit: 1}, {Limit: 3}} {
		p, err := w.svc.Browse(ctx, w.dlq, o)
		if err != nil || len(p.Messages) != 0 || !p.CachedAt.IsZero() {
			t.Fatalf("browse of the emptied dlq (limit %d) = %+v, %v; want an empty page", o.Limit, p, err)
		}
	}
	// New messages are new: browsing them is allowed.
	w.publish("", "work.dlq", deadLetter("new", []byte("x"), "rejected", nil))
	p, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{Limit: 3})
	if err != nil || len(p.Messages) != 1 || p.SafeBrowsesLeft == nil || *p.SafeBrowsesLeft != 1 {
		t.Fatalf("browse of a new message = %+v, %v", p, err)
	}
}

// A message a job gave back is remembered with the delivery it spent, and
// one it moved is forgotten.
func TestGuardFollowsAJob(t *testing.T) {
	w, _ := quorumWorld(t, 3, 3)
	ctx := ctxT(t, time.Minute)
	if _, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{Limit: 3}); err != nil {
		t.Fatal(err)
	}
	// q1 is moved; q0 and q2 are held and given back (now delivered twice).
	r, err := w.svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{IDs: []string{"q1"}}, Who: "test"})
	if err != nil || r.Job.Progress.Moved != 1 {
		t.Fatalf("replay = %+v, %v", r.Job, err)
	}
	if _, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{Limit: 3}); !errors.Is(err, dlqreplay.ErrDeliveryLimit) {
		t.Fatalf("browse after the job: %v, want ErrDeliveryLimit (q0 and q2 were delivered twice)", err)
	}
	if _, counts := w.readCounts("work.dlq"); !slices.Equal(counts, []int64{2, 2}) {
		t.Fatalf("counts = %v, want [2 2]", counts)
	}
}

// logRecorder keeps every record logged through it.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b bytes.Buffer
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.msgs = append(l.msgs, b.String())
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

// A DLQ that does not exist is reported as such, and nothing else is
// logged on the way (no "delivery-limit guard off" warning).
func TestMissingDLQIsOnlyMissing(t *testing.T) {
	w := newWorld(t, worldOpts{})
	rec := &logRecorder{}
	svc, _ := cliService(t, slog.New(rec))
	ref, _ := dlqreplay.ParseID(w.dlq)
	ref.Name = "no.such.dlq"
	ctx := ctxT(t, time.Minute)
	if _, err := svc.Browse(ctx, ref.ID(), dlqreplay.BrowseOptions{}); !errors.Is(err, dlqreplay.ErrUnknownDLQ) {
		t.Errorf("browse: %v, want ErrUnknownDLQ", err)
	}
	if _, err := svc.Run(ctx, dlqreplay.Request{DLQ: ref.ID(), Selection: dlqreplay.Selection{All: true}, Who: "test"}); !errors.Is(err, dlqreplay.ErrUnknownDLQ) {
		t.Errorf("run: %v, want ErrUnknownDLQ", err)
	}
	if len(rec.msgs) > 0 {
		t.Errorf("logged before the missing-DLQ error: %q", rec.msgs)
	}
}

func TestGuardMemory(t *testing.T) {
	head := func(counts ...int64) []seenMsg {
		var out []seenMsg
		for i, c := range counts {
			out = append(out, seenMsg{id: fmt.Sprint("m", i), count: c})
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		m         memory
		depth, n  int
		limit     int64
		refused   bool
		knownSafe int
	}{
		{name: "fresh, limit 3", m: memory{depth: 3, head: head(1, 1, 1)}, depth: 3, n: 3, limit: 3, knownSafe: 3},
		{name: "one look left used", m: memory{depth: 3, head: head(1, 2, 1)}, depth: 3, n: 3, limit: 3, refused: true, knownSafe: 1},
		{name: "risky message beyond the page", m: memory{depth: 3, head: head(0, 0, 2)}, depth: 3, n: 2, limit: 3, knownSafe: 2},
		{name: "queue shrank: it may have moved up", m: memory{depth: 3, head: head(0, 0, 2)}, depth: 2, n: 2, limit: 3, refused: true, knownSafe: 1},
		{name: "grown: new messages unknown", m: memory{depth: 2, head: head(0, 0)}, depth: 4, n: 4, limit: 3, knownSafe: 2},
		{name: "4.x default limit 20", m: memory{depth: 2, head: head(19, 5)}, depth: 2, n: 1, limit: 20, refused: true, knownSafe: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if why := tc.m.refusal("q", tc.depth, tc.n, tc.limit); (why != "") != tc.refused {
				t.Errorf("refusal = %q, want refused %v", why, tc.refused)
			}
			if got := tc.m.knownSafe(tc.depth, tc.limit); got != tc.knownSafe {
				t.Errorf("knownSafe = %d, want %d", got, tc.knownSafe)
			}
		})
	}
	var none *memory
	if none.knownSafe(5, 3) != 0 {
		t.Error("nothing remembered must mean nothing known safe")
	}
	// A read forgets what it should have met and did not, and keeps what
	// lies beyond it.
	m := memory{depth: 4, head: head(1, 1, 1, 1)}
	read := []seenMsg{{"m0", 1}, {"m2", 1}}
	m.seen(read, []seenMsg{{"m0", 2}, {"m2", 2}}, 3)
	if want := []seenMsg{{"m0", 2}, {"m2", 2}, {"m3", 1}}; !slices.Equal(m.head, want) || m.depth != 3 {
		t.Errorf("after a read head = %v (depth %d), want %v", m.head, m.depth, want)
	}
}

// Browses at once, or right after each other, keep the guard: they do not
// pass it together, and none takes a quorum queue that has not counted
// the previous browse's returns yet for an empty one (and forgets).
func TestConcurrentBrowsesKeepTheGuard(t *testing.T) {
	w, _ := quorumWorld(t, 3, 4)
	ctx := ctxT(t, time.Minute)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			p, err := w.be.Browse(ctx, mustRef(t, w.dlq), dlqreplay.BrowseOptions{Limit: 4})
			if err != nil && !errors.Is(err, dlqreplay.ErrDeliveryLimit) {
				t.Errorf("browse: %v (%d messages)", err, len(p.Messages))
			}
		})
	}
	wg.Wait()
	if _, counts := w.readCounts("work.dlq"); slices.Max(counts) > 2 {
		t.Fatalf("counts after 6 browses at once = %v, want none past 2", counts)
	}
}

func mustRef(t *testing.T, id string) dlqreplay.Ref {
	t.Helper()
	ref, err := dlqreplay.ParseID(id)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}
