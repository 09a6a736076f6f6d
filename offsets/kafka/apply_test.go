package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/queuewatch/queuewatch/offsets"
)

// failingAudit cannot write the audit log.
type failingAudit struct{}

func (failingAudit) Begin(context.Context, offsets.Entry) (int64, error) {
	return 0, errors.New("disk full")
}

func (failingAudit) Finish(context.Context, int64, offsets.Entry) error {
	return errors.New("disk full")
}

// TestApplyRefusedWithoutAudit: an apply whose audit record cannot be
// written commits nothing.
func TestApplyRefusedWithoutAudit(t *testing.T) {
	e := newEnv(t)
	p := e.mustPlan("g", "earliest")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := offsets.Apply(ctx, e.resets, p, offsets.ApplyOptions{Who: "test", Audit: failingAudit{}})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("apply: %v", err)
	}
	if got := e.committed("g"); got != [3]int64{5, 5, 5} {
		t.Errorf("an unaudited apply committed: %v", got)
	}
}

// TestApplyLogStartMoved: retention deleted records below an earliest
// target between plan and apply; the plan is stale.
func TestApplyLogStartMoved(t *testing.T) {
	e := newEnv(t)
	p := e.mustPlan("g", "earliest")
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 4})
	if resp, err := e.adm.DeleteRecords(context.Background(), del); err != nil || resp.Error() != nil {
		t.Fatal(err, resp.Error())
	}
	var a audit
	r, err := e.apply(p, &a, nil)
	if !errors.Is(err, offsets.ErrStale) || !strings.Contains(err.Error(), "orders[1]") || !strings.Contains(err.Error(), "re-plan") || r.Result != offsets.ResultStale {
		t.Fatalf("apply: %v, result %s", err, r.Result)
	}
	if got := e.committed("g"); got != [3]int64{5, 5, 5} {
		t.Errorf("a stale apply committed: %v", got)
	}
}

// cutBroker is a broker whose commit request is cut off: the caller's
// context ends as the commit is sent, and the broker's answer is lost
// after the commit landed.
type cutBroker struct {
	*Resets
	cancel context.CancelFunc
	delay  time.Duration
}

func (b *cutBroker) Commit(ctx context.Context, group string, to map[offsets.TP]int64) (map[offsets.TP]error, error) {
	if b.delay > 0 {
		time.Sleep(b.delay)
	}
	if b.cancel == nil {
		return b.Resets.Commit(ctx, group, to)
	}
	b.cancel()
	if _, err := b.Resets.Commit(ctx, group, to); err != nil {
		return nil, err
	}
	return nil, errors.New("read tcp: connection reset by peer")
}

// TestApplyCommitCutOff: a commit whose request was cancelled mid-way, or
// whose answer was lost, is reported from what was read back.
func TestApplyCommitCutOff(t *testing.T) {
	e := newEnv(t)
	p := e.mustPlan("g", "earliest")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := &cutBroker{Resets: e.resets, cancel: cancel}
	var a audit
	r, err := offsets.Apply(ctx, b, p, offsets.ApplyOptions{Who: "test", Audit: &a})
	if got := e.committed("g"); got != [3]int64{2, 0, 0} {
		t.Errorf("committed %v", got)
	}
	if err != nil || r.Result != offsets.ResultOK || len(r.Partitions) != 3 {
		t.Fatalf("apply: %v, %+v", err, r)
	}
	for _, pr := range r.Partitions {
		if pr.Result != "committed" || pr.Committed == nil || *pr.Committed != pr.Target {
			t.Errorf("partition %+v", pr)
		}
	}
}

// TestApplyConcurrentPlansOfOneGroup: two plans of one group applied at
// once: one commits, the other finds the offsets moved.
func TestApplyConcurrentPlansOfOneGroup(t *testing.T) {
	e := newEnv(t)
	p1, p2 := e.mustPlan("g", "earliest"), e.mustPlan("g", "latest")
	b := &cutBroker{Resets: e.resets, delay: 300 * time.Millisecond}
	var wg sync.WaitGroup
	results := make([]offsets.Result, 2)
	for i, p := range []offsets.Plan{p1, p2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r, _ := offsets.Apply(ctx, b, p, offsets.ApplyOptions{Who: "test"})
			results[i] = r.Result
		}()
	}
	wg.Wait()
	ok, stale := 0, 0
	for _, r := range results {
		switch r {
		case offsets.ResultOK:
			ok++
		case offsets.ResultStale:
			stale++
		}
	}
	if ok != 1 || stale != 1 {
		t.Errorf("results %v, want one ok and one stale", results)
	}
}

// locker is an offsets.Locker that refuses with err, or records that the
// lock was held during the commit and released after.
type locker struct {
	err              error
	locked, released int
}

func (l *locker) Lock(context.Context, string, string) (func(), error) {
	if l.err != nil {
		return nil, l.err
	}
	l.locked++
	return func() { l.released++ }, nil
}

// TestApplyLock: an apply whose cross-process lock is held elsewhere is
// refused (ErrBusy) and audited, and commits nothing; one whose lock
// cannot be taken for another reason fails and commits nothing; a held
// lock is released after the commit.
func TestApplyLock(t *testing.T) {
	e := newEnv(t)
	p := e.mustPlan("g", "earliest")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		err    error
		result offsets.Result
	}{
		{fmt.Errorf("%w: held by serve on host-b", offsets.ErrBusy), offsets.ResultRefused},
		{errors.New("database is locked"), offsets.ResultFailed},
	} {
		var a audit
		r, err := offsets.Apply(ctx, e.resets, p, offsets.ApplyOptions{Who: "test", Audit: &a, Lock: &locker{err: tc.err}})
		if !errors.Is(err, tc.err) || r.Result != tc.result {
			t.Errorf("lock %v: apply %v, result %s; want result %s", tc.err, err, r.Result, tc.result)
		}
		if len(a.entries) != 1 || a.entries[0].Receipt.Result != tc.result {
			t.Errorf("lock %v: audit %+v", tc.err, a.entries)
		}
		if got := e.committed("g"); got != [3]int64{5, 5, 5} {
			t.Errorf("lock %v: committed %v", tc.err, got)
		}
	}
	l := &locker{}
	if r, err := offsets.Apply(ctx, e.resets, p, offsets.ApplyOptions{Who: "test", Lock: l}); err != nil || r.Result != offsets.ResultOK {
		t.Fatalf("apply: %v %+v", err, r)
	}
	if l.locked != 1 || l.released != 1 {
		t.Errorf("locked %d, released %d; want 1 and 1", l.locked, l.released)
	}
}
