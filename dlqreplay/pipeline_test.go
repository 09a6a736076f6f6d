package dlqreplay_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// The pipeline's answers to session faults a real broker cannot be made to
// produce on demand (a Remove that fails half-way through a batch, a Settle
// that returns outcomes and an error) are tested over fakeSession: the
// Service and the audit store are the real ones.

const fakeDLQ = "nats:fake::dlq"

// fakeBackend opens sessions over one shared log-like DLQ; restored
// lists the message ids its Restore published, in order.
type fakeBackend struct {
	s        *fakeSession
	restored []string
	// restoreCalls counts Backend.Restore calls (a connection each at a
	// real broker).
	restoreCalls int
}

func (b *fakeBackend) Broker() queue.Broker { return queue.NATS }
func (b *fakeBackend) Cluster() string      { return "fake" }
func (b *fakeBackend) Browse(context.Context, dlqreplay.Ref, dlqreplay.BrowseOptions) (dlqreplay.Page, error) {
	return dlqreplay.Page{}, errors.New("not supported")
}

func (b *fakeBackend) Open(context.Context, dlqreplay.JobSpec) (dlqreplay.Session, error) {
	return b.s, nil
}

func (b *fakeBackend) Restore(ctx context.Context, _ dlqreplay.Ref, msgs []dlqreplay.Archived, h dlqreplay.RestoreHooks) error {
	b.restoreCalls++
	for _, m := range msgs {
		if err := h.Pace(ctx); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil { // the chunk's deadline passed
			return err
		}
		b.restored = append(b.restored, m.MessageID)
		h.Answered(dlqreplay.Restored{ID: m.ID})
	}
	return nil
}

// fakeSession is a DLQ of ids m1…mN. Remove call number failRemove (from
// 1) and every later one fail; the failSettle-th Settle that has anything
// pending settles it, the last of it failed, and returns an error.
type fakeSession struct {
	ids        []string
	logLike    bool // KeepsHandled
	failRemove int
	failSettle int
	failScan   int  // the scan fails after reading this many (0: never)
	batchy     bool // SettleBatch settles nothing, as a batch never fills

	replays map[string]int64 // a message's replay count header, by id
	counts  []int64          // the replay count of each Publish

	removes, settles int
	pending          []dlqreplay.Settled
	read, gone, kept []string // gone: settled removed or moved
	closed           bool
}

var (
	errScan   = errors.New("connection lost while reading")
	errRemove = errors.New("remove refused by the broker")
	errSettle = errors.New("connection lost while settling")
)

func newFake(n int) *fakeSession {
	s := &fakeSession{}
	for i := range n {
		s.ids = append(s.ids, "m"+fmt.Sprint(i+1))
	}
	return s
}

func (s *fakeSession) Depth() int64       { return int64(len(s.ids)) }
func (s *fakeSession) KeepsHandled() bool { return s.logLike }

func (s *fakeSession) Scan(_ context.Context, each func(*dlqreplay.Delivery) error) error {
	for _, id := range s.ids {
		if s.failScan > 0 && len(s.read) == s.failScan {
			return errScan
		}
		s.read = append(s.read, id)
		m := queue.Message{ID: id}
		if n, ok := s.replays[id]; ok {
			m.Headers = []queue.Header{{Key: queue.HeaderReplayCount, Value: []byte(queue.FormatReplayCount(n))}}
		}
		if err := each(&dlqreplay.Delivery{Message: m, Handle: id}); err != nil {
			return err
		}
	}
	return nil
}

func (s *fakeSession) Route(*queue.Message, dlqreplay.Target) (dlqreplay.Route, error) {
	return dlqreplay.Route{Target: "orders"}, nil
}
func (s *fakeSession) CheckRoute(context.Context, dlqreplay.Route) error { return nil }

func (s *fakeSession) Keep(d *dlqreplay.Delivery) error {
	s.kept = append(s.kept, d.Message.ID)
	return nil
}

func (s *fakeSession) Publish(_ context.Context, d *dlqreplay.Delivery, _ dlqreplay.Route, rp dlqreplay.Replay) error {
	s.counts = append(s.counts, rp.Count)
	s.pending = append(s.pending, dlqreplay.Settled{Delivery: d})
	return nil
}

func (s *fakeSession) Remove(_ context.Context, d *dlqreplay.Delivery) error {
	s.removes++
	if s.failRemove > 0 && s.removes >= s.failRemove {
		return fmt.Errorf("%s: %w", d.Message.ID, errRemove)
	}
	s.pending = append(s.pending, dlqreplay.Settled{Delivery: d})
	return nil
}

func (s *fakeSession) Settle(_ context.Context, mode dlqreplay.SettleMode) ([]dlqreplay.Settled, error) {
	if s.batchy && mode == dlqreplay.SettleBatch {
		return nil, nil
	}
	out := s.pending
	s.pending = nil
	if len(out) > 0 {
		s.settles++
	}
	var err error
	if s.settles == s.failSettle && len(out) > 0 {
		out[len(out)-1].Err, err = errSettle, errSettle
		s.kept = append(s.kept, out[len(out)-1].Delivery.Message.ID)
	}
	for _, st := range out {
		if st.Err == nil {
			s.gone = append(s.gone, st.Delivery.Message.ID)
		}
	}
	return out, err
}

func (s *fakeSession) Close(context.Context) error {
	s.closed = true
	return nil
}

// failingArchive is the audit store with Archive refused once armed.
type failingArchive struct {
	*store.Store
	armed bool
	// onCreate, when set, runs inside CreateJob before the job is stored.
	onCreate func()
}

func (s *failingArchive) CreateJob(ctx context.Context, j dlqreplay.Job) error {
	if s.onCreate != nil {
		s.onCreate()
	}
	return s.Store.CreateJob(ctx, j)
}

var errArchive = errors.New("disk full")

func (s *failingArchive) Archive(ctx context.Context, msgs []dlqreplay.Archived) ([]int64, error) {
	if s.armed {
		return nil, errArchive
	}
	return s.Store.Archive(ctx, msgs)
}

func newFakeService(t *testing.T, b dlqreplay.Backend) (*dlqreplay.Service, *failingArchive) {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	fs := &failingArchive{Store: st}
	svc, err := dlqreplay.New(dlqreplay.Options{Store: fs, Backends: []dlqreplay.Backend{b}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, fs
}

// want is one message's expected outcome: its result and a part of its
// reason.
type want struct {
	result dlqreplay.Result
	reason string
}

func TestPipelineAccountsForEveryMessageAfterAFault(t *testing.T) {
	tests := []struct {
		name string
		// sent are deleted by a first, faultless job (the DLQ is a log,
		// so they stay readable); the job under test then sees them as
		// already sent.
		sent        int
		failArchive bool
		fake        func() *fakeSession
		req         dlqreplay.Request
		outcomes    map[string]want
		jobErr      error
	}{
		{
			name: "delete: remove fails half-way through the batch",
			fake: func() *fakeSession { s := newFake(6); s.failRemove = 3; return s },
			req:  dlqreplay.Request{Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}},
			outcomes: map[string]want{
				"m1": {dlqreplay.ResultDeleted, ""},
				"m2": {dlqreplay.ResultDeleted, ""},
				"m3": {dlqreplay.ResultFailed, "archived, not removed: m3: remove refused"},
				"m4": {dlqreplay.ResultFailed, "archived, not removed: m3: remove refused"},
				"m5": {dlqreplay.ResultFailed, "archived, not removed: m3: remove refused"},
				"m6": {dlqreplay.ResultFailed, "archived, not removed: m3: remove refused"},
			},
			jobErr: errRemove,
		},
		{
			name: "delete: the unselected message that flushes the batch is kept",
			fake: func() *fakeSession { s := newFake(6); s.failRemove = 2; return s },
			req: dlqreplay.Request{Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{
				IDs: []string{"m1", "m2", "m3", "m5", "m6"},
			}},
			outcomes: map[string]want{
				"m1": {dlqreplay.ResultDeleted, ""},
				"m2": {dlqreplay.ResultFailed, "archived, not removed: m2: remove refused"},
				"m3": {dlqreplay.ResultFailed, "archived, not removed: m2: remove refused"},
			},
			jobErr: errRemove,
		},
		{
			name: "delete: a message already sent that cannot be removed",
			sent: 3,
			fake: func() *fakeSession { s := newFake(5); s.logLike = true; s.failRemove = 2; return s },
			req:  dlqreplay.Request{Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}},
			outcomes: map[string]want{
				"m1": {dlqreplay.ResultSkipped, "already sent by an earlier job"},
				"m2": {dlqreplay.ResultFailed, "already sent by an earlier job; not removed: m2: remove refused"},
			},
			jobErr: errRemove,
		},
		{
			name: "delete: a message already sent after deletes that cannot be removed",
			sent: 1,
			fake: func() *fakeSession {
				s := newFake(4)
				s.ids = []string{"m2", "m3", "m1", "m4"}
				s.logLike, s.failRemove = true, 2
				return s
			},
			req: dlqreplay.Request{Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}},
			outcomes: map[string]want{
				"m2": {dlqreplay.ResultDeleted, ""},
				"m3": {dlqreplay.ResultFailed, "archived, not removed: m3: remove refused"},
				"m1": {dlqreplay.ResultFailed, "already sent by an earlier job; not removed: m3: remove refused"},
			},
			jobErr: errRemove,
		},
		{
			name:        "delete: the archive fails",
			failArchive: true,
			fake:        func() *fakeSession { return newFake(3) },
			req:         dlqreplay.Request{Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}},
			outcomes: map[string]want{
				"m1": {dlqreplay.ResultFailed, "archive: disk full"},
				"m2": {dlqreplay.ResultFailed, "archive: disk full"},
				"m3": {dlqreplay.ResultFailed, "archive: disk full"},
			},
			jobErr: errArchive,
		},
		{
			// The five are recorded in flight and published in one batch,
			// settled by the first Settle.
			name: "replay: settle returns outcomes and an error",
			fake: func() *fakeSession { s := newFake(5); s.failSettle = 1; return s },
			req:  dlqreplay.Request{Selection: dlqreplay.Selection{All: true}},
			outcomes: map[string]want{
				"m1": {dlqreplay.ResultMoved, ""},
				"m2": {dlqreplay.ResultMoved, ""},
				"m3": {dlqreplay.ResultMoved, ""},
				"m4": {dlqreplay.ResultMoved, ""},
				"m5": {dlqreplay.ResultFailed, errSettle.Error()},
			},
			jobErr: errSettle,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.fake()
			b := &fakeBackend{s: newFake(tt.sent)}
			svc, auditStore := newFakeService(t, b)
			if tt.sent > 0 {
				if r, err := svc.Run(context.Background(), dlqreplay.Request{
					DLQ: fakeDLQ, Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true},
				}); err != nil || r.Job.State != dlqreplay.StateSucceeded {
					t.Fatalf("first job: %+v, %v", r.Job, err)
				}
			}
			b.s, auditStore.armed = s, tt.failArchive
			tt.req.DLQ = fakeDLQ
			r, err := svc.Run(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if r.Job.State != dlqreplay.StateFailed || !strings.Contains(r.Job.Error, tt.jobErr.Error()) {
				t.Errorf("job %s %q, want failed with %q", r.Job.State, r.Job.Error, tt.jobErr)
			}
			got := map[string]dlqreplay.Outcome{}
			for _, o := range r.Outcomes {
				if _, dup := got[o.MessageID]; dup {
					t.Errorf("%s has two outcomes", o.MessageID)
				}
				got[o.MessageID] = o
			}
			for id, w := range tt.outcomes {
				o, ok := got[id]
				if !ok {
					t.Errorf("%s has no outcome", id)
					continue
				}
				if o.Result != w.result || !strings.Contains(o.Reason, w.reason) {
					t.Errorf("%s: %s %q, want %s %q", id, o.Result, o.Reason, w.result, w.reason)
				}
			}
			if len(got) != len(tt.outcomes) {
				t.Errorf("outcomes %+v, want %d", r.Outcomes, len(tt.outcomes))
			}
			// Every message read is either gone or kept in the DLQ for
			// Close to give back, and its outcome says which.
			for _, id := range s.read {
				isGone, isKept := slices.Contains(s.gone, id), slices.Contains(s.kept, id)
				res := got[id].Result
				if isGone == isKept || isGone && res == dlqreplay.ResultFailed ||
					isKept && (res == dlqreplay.ResultMoved || res == dlqreplay.ResultDeleted) {
					t.Errorf("%s: outcome %q, gone %v, kept %v", id, res, isGone, isKept)
				}
			}
			if p := r.Job.Progress; p.Moved+p.Failed+p.Skipped != int64(len(tt.outcomes)) {
				t.Errorf("progress %+v does not count the %d outcomes", p, len(tt.outcomes))
			}
			if !s.closed {
				t.Error("session not closed")
			}
		})
	}
}

// TestRestoreRepublishesOnlyWhatTheDeleteRemoved: a delete archives a
// batch before removing it, so a fault part-way leaves messages in the DLQ
// with archive rows. Restoring that delete job, by its id or by every
// archive id it wrote, must publish only the messages that really left the
// DLQ; a copy of one still there would be a duplicate.
func TestRestoreRepublishesOnlyWhatTheDeleteRemoved(t *testing.T) {
	tests := []struct {
		name    string
		fake    func() *fakeSession
		deleted []string
	}{
		{
			name:    "remove fails half-way through the batch",
			fake:    func() *fakeSession { s := newFake(6); s.failRemove = 3; return s },
			deleted: []string{"m1", "m2"},
		},
		{
			name:    "settle reports the last remove failed",
			fake:    func() *fakeSession { s := newFake(4); s.failSettle = 1; return s },
			deleted: []string{"m1", "m2", "m3"},
		},
	}
	const target = "nats:fake::orders"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s := tt.fake()
			b := &fakeBackend{s: s}
			svc, _ := newFakeService(t, b)
			del, err := svc.Run(ctx, dlqreplay.Request{DLQ: fakeDLQ, Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}})
			if err != nil || del.Job.State != dlqreplay.StateFailed {
				t.Fatalf("delete: %+v, %v", del.Job, err)
			}
			if !slices.Equal(s.gone, tt.deleted) {
				t.Fatalf("the fault removed %v, want %v", s.gone, tt.deleted)
			}
			arch, err := svc.Archived(ctx, dlqreplay.ArchiveQuery{DLQ: fakeDLQ, Limit: 100})
			if err != nil || len(arch) != len(s.ids) {
				t.Fatalf("archived %+v, %v; want a row per message", arch, err)
			}
			var archIDs []int64
			for _, a := range arch {
				archIDs = append(archIDs, a.ID)
			}
			for _, req := range []dlqreplay.RestoreRequest{
				{JobID: del.Job.ID, Target: target},
				{ArchiveIDs: archIDs, Target: target},
			} {
				b.restored = nil
				r, err := svc.Restore(ctx, req)
				if err != nil {
					t.Fatalf("restore %+v: %v", req, err)
				}
				if !slices.Equal(b.restored, tt.deleted) {
					t.Errorf("restore %+v published %v, want only the deleted %v", req, b.restored, tt.deleted)
				}
				for _, o := range r.Outcomes {
					wasDeleted := slices.Contains(tt.deleted, o.MessageID)
					if wasDeleted && o.Result != dlqreplay.ResultMoved ||
						!wasDeleted && (o.Result != dlqreplay.ResultSkipped || !strings.Contains(o.Reason, "not deleted")) {
						t.Errorf("restore %+v: %s %s %q", req, o.MessageID, o.Result, o.Reason)
					}
				}
				if p := r.Job.Progress; len(r.Outcomes) != len(s.ids) || p.Moved != int64(len(tt.deleted)) ||
					p.Skipped != int64(len(s.ids)-len(tt.deleted)) || r.Job.State != dlqreplay.StateSucceeded {
					t.Errorf("restore %+v: job %+v, %d outcomes", req, r.Job, len(r.Outcomes))
				}
			}
		})
	}
}

// TestStoppedJobCountsWhatItDidNotRead: a job whose selection is not
// known up front (ids, a group, headers) and that stops early counts in
// to_move the unread messages its selection could still take, so its
// remaining is not 0 while they may be in the DLQ.
func TestStoppedJobCountsWhatItDidNotRead(t *testing.T) {
	for _, tc := range []struct {
		name      string
		selection dlqreplay.Selection
		toMove    int64
	}{
		{"ids", dlqreplay.Selection{IDs: []string{"m1", "m2", "m3", "m4", "m5", "m6"}}, 6},
		{"ids and a limit", dlqreplay.Selection{IDs: []string{"m1", "m2", "m3", "m4", "m5", "m6"}, Limit: 3}, 3},
		{"a time range", dlqreplay.Selection{Until: time.Now()}, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(10)
			s.failScan = 2
			svc, _ := newFakeService(t, &fakeBackend{s: s})
			r, err := svc.Run(context.Background(), dlqreplay.Request{
				DLQ: fakeDLQ, Action: dlqreplay.ActionMove, Target: dlqreplay.Target{Name: "other"}, Selection: tc.selection,
			})
			if err != nil {
				t.Fatal(err)
			}
			p := r.Job.Progress
			// The two it read were queued, not yet published: they stay
			// in the DLQ without an outcome.
			if r.Job.State != dlqreplay.StateFailed || p.Moved != 0 || p.ToMove != tc.toMove || p.Remaining != tc.toMove ||
				len(s.kept) != 2 {
				t.Fatalf("stopped after two messages: %s %+v, want to_move %d", r.Job.State, p, tc.toMove)
			}
		})
	}
}

// TestPipelinePassesTheNextReplayCount: the pipeline, not the backend,
// computes each copy's replay count from the message's own.
func TestPipelinePassesTheNextReplayCount(t *testing.T) {
	s := newFake(3)
	s.replays = map[string]int64{"m2": 1, "m3": 41}
	svc, _ := newFakeService(t, &fakeBackend{s: s})
	if _, err := svc.Run(context.Background(), dlqreplay.Request{DLQ: fakeDLQ, Selection: dlqreplay.Selection{All: true}}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.counts, []int64{1, 2, 42}) {
		t.Fatalf("published replay counts %v, want [1 2 42]", s.counts)
	}
}

// TestCloseWhileAJobIsBeingCreated: a job holds its DLQs' locks before
// the store recorded it; a Close in that window cancels it (it must not
// find a job it cannot cancel), and the job then ends cancelled.
func TestCloseWhileAJobIsBeingCreated(t *testing.T) {
	ctx := context.Background()
	b := &fakeBackend{s: newFake(3)}
	svc, fs := newFakeService(t, b)
	del, err := svc.Run(ctx, dlqreplay.Request{DLQ: fakeDLQ, Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}})
	if err != nil || del.Job.State != dlqreplay.StateSucceeded {
		t.Fatalf("delete: %+v, %v", del.Job, err)
	}
	entered, proceed := make(chan struct{}), make(chan struct{})
	fs.onCreate = func() { close(entered); <-proceed }
	type started struct {
		job dlqreplay.Job
		err error
	}
	res := make(chan started, 1)
	go func() {
		j, err := svc.StartRestore(ctx, dlqreplay.RestoreRequest{JobID: del.Job.ID, Target: "nats:fake::orders"})
		res <- started{j, err}
	}()
	<-entered
	svc.Close()
	close(proceed)
	st := <-res
	if st.err != nil {
		t.Fatal(st.err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		j, err := svc.Job(ctx, st.job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != dlqreplay.StateRunning {
			if j.State != dlqreplay.StateCancelled || len(b.restored) != 0 {
				t.Fatalf("a job closed before it launched ended %s having restored %v, want cancelled, none", j.State, b.restored)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still running", j.ID)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRestoreKeepsChunksWhateverTheRate: a rate-limited restore publishes
// chunks of 100 messages, one Backend.Restore (one connection) each, and
// waits for the rate between the messages of a chunk, not by cutting the
// chunks to the limiter's burst (20 at 200/s).
func TestRestoreKeepsChunksWhateverTheRate(t *testing.T) {
	ctx := context.Background()
	b := &fakeBackend{s: newFake(250)}
	svc, _ := newFakeService(t, b)
	del, err := svc.Run(ctx, dlqreplay.Request{DLQ: fakeDLQ, Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}, Rate: -1})
	if err != nil || del.Job.Progress.Moved != 250 {
		t.Fatalf("delete: %+v, %v", del.Job, err)
	}
	r, err := svc.Restore(ctx, dlqreplay.RestoreRequest{JobID: del.Job.ID, Target: "nats:fake::orders", Rate: 400})
	if err != nil || r.Job.Progress.Moved != 250 {
		t.Fatalf("restore: %+v, %v", r.Job, err)
	}
	if b.restoreCalls != 3 {
		t.Errorf("250 messages at 400/s took %d Backend.Restore calls, want 3 chunks (100, 100, 50)", b.restoreCalls)
	}
}

// TestRestoreCancelStopsBeforeTheNextMessage: a restore cancelled while
// a chunk waits for the rate publishes nothing more; the messages it sent
// are moved and the rest have no outcome (remaining), none failed.
func TestRestoreCancelStopsBeforeTheNextMessage(t *testing.T) {
	ctx := context.Background()
	b := &fakeBackend{s: newFake(50)}
	svc, _ := newFakeService(t, b)
	del, err := svc.Run(ctx, dlqreplay.Request{DLQ: fakeDLQ, Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}, Rate: -1})
	if err != nil || del.Job.Progress.Moved != 50 {
		t.Fatalf("delete: %+v, %v", del.Job, err)
	}
	j, err := svc.StartRestore(ctx, dlqreplay.RestoreRequest{JobID: del.Job.ID, Target: "nats:fake::orders", Rate: 20})
	if err != nil {
		t.Fatal(err)
	}
	// At 20/s the chunk of 50 takes 2.4 s; cancel early in it. (Outcomes
	// are reported per chunk, so there is no progress to wait for.)
	time.Sleep(300 * time.Millisecond)
	if err := svc.Cancel(j.ID); err != nil {
		t.Fatal(err)
	}
	r, err := svc.Wait(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Job.Progress
	if r.Job.State != dlqreplay.StateCancelled || b.restoreCalls != 1 || len(b.restored) >= 50 ||
		p.Moved != int64(len(b.restored)) || p.Failed != 0 || p.Remaining != 50-p.Moved || len(r.Outcomes) != len(b.restored) {
		t.Fatalf("cancelled restore: %s %+v, %d outcomes, %d published in %d calls", r.Job.State, p, len(r.Outcomes), len(b.restored), b.restoreCalls)
	}
}

// TestRestoreAtATinyRate: a rate so small that a chunk's wait overflows a
// time.Duration still publishes the first message (the limiter's burst)
// instead of failing it on an already expired deadline.
func TestRestoreAtATinyRate(t *testing.T) {
	ctx := context.Background()
	b := &fakeBackend{s: newFake(1)}
	svc, _ := newFakeService(t, b)
	del, err := svc.Run(ctx, dlqreplay.Request{DLQ: fakeDLQ, Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}, Rate: -1})
	if err != nil || del.Job.Progress.Moved != 1 {
		t.Fatalf("delete: %+v, %v", del.Job, err)
	}
	r, err := svc.Restore(ctx, dlqreplay.RestoreRequest{JobID: del.Job.ID, Target: "nats:fake::orders", Rate: 1e-300})
	if err != nil || r.Job.Progress.Moved != 1 {
		t.Fatalf("restore at 1e-300/s: %+v, %v", r.Job, err)
	}
}

// TestMayRouteKeepsWhatItRefuses: a message whose destination MayRoute
// refuses stays in the DLQ, failed with the reason, and nothing is sent
// there; the others move.
func TestMayRouteKeepsWhatItRefuses(t *testing.T) {
	s := newFake(3)
	svc, _ := newFakeService(t, &fakeBackend{s: s})
	r, err := svc.Run(context.Background(), dlqreplay.Request{
		DLQ: fakeDLQ, Selection: dlqreplay.Selection{All: true},
		MayRoute: func(target string) error { return errors.New("ana may not send to " + target) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Job.Progress; p.Moved != 0 || p.Failed != 3 || len(s.counts) != 0 {
		t.Fatalf("progress %+v, %d published", p, len(s.counts))
	}
	for _, o := range r.Outcomes {
		if o.Result != dlqreplay.ResultFailed || o.Reason != "ana may not send to orders" {
			t.Errorf("outcome %+v", o)
		}
	}
	r, err = svc.Run(context.Background(), dlqreplay.Request{
		DLQ: fakeDLQ, Selection: dlqreplay.Selection{All: true}, MayRoute: func(string) error { return nil },
	})
	if err != nil || r.Job.Progress.Moved != 3 {
		t.Fatalf("allowed: %+v, %v", r.Job.Progress, err)
	}
}

// TestFinishedNamesTheTouchedQueues: Options.Finished hears of a job that
// moved messages, with its DLQ and where they went, and of a delete with
// its DLQ alone; a dry run changed nothing and is not told.
func TestFinishedNamesTheTouchedQueues(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	touched := make(chan dlqreplay.Touched, 10)
	b := &fakeBackend{s: newFake(3)}
	svc, err := dlqreplay.New(dlqreplay.Options{Store: st, Backends: []dlqreplay.Backend{b}, Finished: func(_ context.Context, t dlqreplay.Touched) {
		touched <- t
	}})
	if err != nil {
		t.Fatal(err)
	}
	next := func() dlqreplay.Touched {
		t.Helper()
		select {
		case tt := <-touched:
			return tt
		case <-time.After(10 * time.Second):
			t.Fatal("Finished was not called")
		}
		return dlqreplay.Touched{}
	}
	ctx := context.Background()
	all := dlqreplay.Selection{All: true}
	if _, err := svc.Run(ctx, dlqreplay.Request{DLQ: fakeDLQ, Selection: all, DryRun: true}); err != nil {
		t.Fatal(err)
	}
	r, err := svc.Run(ctx, dlqreplay.Request{DLQ: fakeDLQ, Selection: all})
	if err != nil {
		t.Fatal(err)
	}
	if got := next(); got.Job.ID != r.Job.ID || got.Broker != queue.NATS || got.Cluster != "fake" || !slices.Equal(got.Names, []string{"dlq", "orders"}) {
		t.Errorf("after the replay: %+v, want job %s on nats:fake touching dlq and orders", got, r.Job.ID)
	}
	b.s = newFake(2)
	r, err = svc.Run(ctx, dlqreplay.Request{DLQ: fakeDLQ, Action: dlqreplay.ActionDelete, Selection: all})
	if err != nil {
		t.Fatal(err)
	}
	if got := next(); got.Job.ID != r.Job.ID || !slices.Equal(got.Names, []string{"dlq"}) {
		t.Errorf("after the delete: %+v, want job %s touching dlq alone", got, r.Job.ID)
	}
	svc.Close()
	select {
	case tt := <-touched:
		t.Errorf("Finished called once more, for %+v", tt.Job)
	default:
	}
}

// TestJobAfterACrashNamesItsDuplicates: a job that died with messages in
// flight (recorded, never settled) leaves the next job on the DLQ to mark
// them possible duplicates; a job after that, which finds them moved, does
// not.
func TestJobAfterACrashNamesItsDuplicates(t *testing.T) {
	ctx := context.Background()
	b := &fakeBackend{s: newFake(5)}
	svc, auditStore := newFakeService(t, b)
	dead := dlqreplay.Job{ID: "job-dead", DLQ: fakeDLQ, Action: dlqreplay.ActionReplay, State: dlqreplay.StateRunning, Created: time.Now().Add(-time.Minute)}
	if err := auditStore.CreateJob(ctx, dead); err != nil {
		t.Fatal(err)
	}
	if err := auditStore.RecordInFlight(ctx, dead.ID, fakeDLQ, []string{"m2", "m4"}); err != nil {
		t.Fatal(err)
	}
	r, err := svc.Run(ctx, dlqreplay.Request{DLQ: fakeDLQ, Selection: dlqreplay.Selection{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.Progress.Moved != 5 || r.Job.Progress.Duplicates != 2 {
		t.Fatalf("progress %+v, want 5 moved, 2 duplicates", r.Job.Progress)
	}
	for _, o := range r.Outcomes {
		flagged := o.MessageID == "m2" || o.MessageID == "m4"
		if o.PossibleDuplicate != flagged || flagged && !strings.Contains(o.Reason, "job-dead was interrupted") {
			t.Errorf("%s: possible duplicate %v %q, want %v", o.MessageID, o.PossibleDuplicate, o.Reason, flagged)
		}
	}
	// The same ids again (dead-lettered anew): the job before moved them.
	b.s = newFake(5)
	r, err = svc.Run(ctx, dlqreplay.Request{DLQ: fakeDLQ, Selection: dlqreplay.Selection{All: true}})
	if err != nil || r.Job.Progress.Moved != 5 || r.Job.Progress.Duplicates != 0 {
		t.Fatalf("second job: %v %+v, want 5 moved, no duplicates", err, r.Job.Progress)
	}
}

// TestSlowJobSettlesWhileItWaits: a job whose rate keeps it waiting
// settles what is due meanwhile, so its progress moves before a batch of
// the session's would fill (issue 37: at rate 1 a RabbitMQ replay showed
// 0 moved for 100 s, and a crash left all of that in two places).
func TestSlowJobSettlesWhileItWaits(t *testing.T) {
	s := newFake(3)
	s.batchy = true
	svc, _ := newFakeService(t, &fakeBackend{s: s})
	j, err := svc.Start(context.Background(), dlqreplay.Request{DLQ: fakeDLQ, Selection: dlqreplay.Selection{All: true}, Rate: 2})
	if err != nil {
		t.Fatal(err)
	}
	for {
		got, err := svc.Job(context.Background(), j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Progress.Moved > 0 {
			break
		}
		if got.State != dlqreplay.StateRunning {
			t.Fatalf("the job moved nothing until it ended: %+v", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if r, err := svc.Wait(context.Background(), j.ID); err != nil || r.Job.Progress.Moved != 3 {
		t.Fatalf("job: %v %+v", err, r.Job)
	}
}

// TestRestoreAfterACrashNamesItsDuplicates: a restore that died with
// archived messages in flight leaves the next restore into the same
// target to mark them possible duplicates, and a message restored into
// the target before is one too; the rest are not.
func TestRestoreAfterACrashNamesItsDuplicates(t *testing.T) {
	ctx := context.Background()
	b := &fakeBackend{s: newFake(4)}
	svc, auditStore := newFakeService(t, b)
	del, err := svc.Run(ctx, dlqreplay.Request{DLQ: fakeDLQ, Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{All: true}})
	if err != nil || del.Job.Progress.Failed != 0 {
		t.Fatalf("delete: %v %+v", err, del.Job.Progress)
	}
	archived, err := auditStore.Archived(ctx, dlqreplay.ArchiveQuery{JobID: del.Job.ID, Limit: 10})
	if err != nil || len(archived) != 4 {
		t.Fatalf("archived %d, %v", len(archived), err)
	}
	target := "nats:fake::orders"
	dead := dlqreplay.Job{ID: "restore-dead", DLQ: target, Action: dlqreplay.ActionRestore, State: dlqreplay.StateRunning, Created: time.Now().Add(-time.Minute)}
	if err := auditStore.CreateJob(ctx, dead); err != nil {
		t.Fatal(err)
	}
	inFlight := map[string]bool{archived[1].MessageID: true}
	if err := auditStore.RecordInFlight(ctx, dead.ID, target, []string{"archive/" + strconv.FormatInt(archived[1].ID, 10)}); err != nil {
		t.Fatal(err)
	}
	if err := auditStore.MarkRestored(ctx, []int64{archived[2].ID}, target); err != nil {
		t.Fatal(err)
	}
	before := map[string]bool{archived[2].MessageID: true}
	r, err := svc.Restore(ctx, dlqreplay.RestoreRequest{JobID: del.Job.ID, Target: target})
	if err != nil || r.Job.Progress.Moved != 4 || r.Job.Progress.Duplicates != 2 {
		t.Fatalf("restore: %v %+v, want 4 moved, 2 possible duplicates", err, r.Job.Progress)
	}
	for _, o := range r.Outcomes {
		switch {
		case inFlight[o.MessageID]:
			if !o.PossibleDuplicate || !strings.Contains(o.Reason, "restore job restore-dead was interrupted") {
				t.Errorf("%s, in flight when a restore died: %v %q", o.MessageID, o.PossibleDuplicate, o.Reason)
			}
		case before[o.MessageID]:
			if !o.PossibleDuplicate || !strings.Contains(o.Reason, "restored into this target before") {
				t.Errorf("%s, restored before: %v %q", o.MessageID, o.PossibleDuplicate, o.Reason)
			}
		case o.PossibleDuplicate:
			t.Errorf("%s flagged: %q", o.MessageID, o.Reason)
		}
	}
}
