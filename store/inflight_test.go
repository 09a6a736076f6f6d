package store

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/dlqreplay"
)

func TestInFlightNamesWhatAStoppedJobLeft(t *testing.T) { forEngines(t, testInFlight) }

func testInFlight(t *testing.T, e engine, db string) {
	ctx := context.Background()
	s := e.open(t, db)
	defer func() { _ = s.Close() }()
	const dlq = "rabbitmq:c:/:q.dlq"
	t0 := time.Now().Add(-time.Minute)
	job := func(id, dlq string, state dlqreplay.JobState, created time.Time, outcomes ...dlqreplay.Outcome) {
		t.Helper()
		j := dlqreplay.Job{ID: id, DLQ: dlq, Action: dlqreplay.ActionReplay, State: dlqreplay.StateRunning, Created: created}
		if err := s.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		j.State = state
		if err := s.UpdateJob(ctx, j, 0, outcomes); err != nil {
			t.Fatal(err)
		}
	}
	record := func(job, dlq string, ids ...string) {
		t.Helper()
		if err := s.RecordInFlight(ctx, job, dlq, ids); err != nil {
			t.Fatal(err)
		}
	}
	// j0 finished: it settled everything it sent.
	job("j0", dlq, dlqreplay.StateSucceeded, t0, dlqreplay.Outcome{MessageID: "e", Result: dlqreplay.ResultMoved})
	record("j0", dlq, "e")
	// j1 died: a settled (its outcome stored), b, c and d not.
	job("j1", dlq, dlqreplay.StateRunning, t0.Add(time.Second), dlqreplay.Outcome{MessageID: "a", Result: dlqreplay.ResultMoved})
	record("j1", dlq, "a", "b")
	record("j1", dlq, "c", "d", "a") // a second record of one id is kept once
	// Another DLQ's job.
	job("jx", "rabbitmq:c:/:other.dlq", dlqreplay.StateInterrupted, t0, dlqreplay.Outcome{})
	record("jx", "rabbitmq:c:/:other.dlq", "b")

	check := func(job string, want map[string]string) {
		t.Helper()
		got, err := s.InFlight(ctx, dlq, job)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("in flight for %s = %v, want %v", job, got, want)
		}
	}
	// A running job other than the asker's is a dead one: the asker holds
	// the DLQ.
	check("j9", map[string]string{"b": "j1", "c": "j1", "d": "j1"})
	check("j1", map[string]string{})
	// Marked interrupted (a restart of this store, or another replica).
	if _, err := s.db.ExecContext(ctx, `UPDATE jobs SET state = ? WHERE id = ?`, string(dlqreplay.StateInterrupted), "j1"); err != nil {
		t.Fatal(err)
	}
	check("j9", map[string]string{"b": "j1", "c": "j1", "d": "j1"})
	// A later job moved c and failed d (d is still in the DLQ, and may
	// still be in the target too); a dry run moves nothing.
	job("j2", dlq, dlqreplay.StateSucceeded, t0.Add(2*time.Second),
		dlqreplay.Outcome{MessageID: "c", Result: dlqreplay.ResultMoved, PossibleDuplicate: true},
		dlqreplay.Outcome{MessageID: "d", Result: dlqreplay.ResultFailed, PossibleDuplicate: true},
		dlqreplay.Outcome{MessageID: "b", Result: dlqreplay.ResultWouldMove})
	check("j9", map[string]string{"b": "j1", "d": "j1"})
}

func TestInFlightPrunedWhenAJobEnds(t *testing.T) { forEngines(t, testInFlightPruned) }

// testInFlightPruned checks that a job's in-flight records are deleted
// when it ends with its copies settled, and kept while it runs or after an
// interruption, when the next job needs them.
func testInFlightPruned(t *testing.T, e engine, db string) {
	ctx := context.Background()
	s := e.open(t, db)
	defer func() { _ = s.Close() }()
	const dlq = "kafka:c::orders.DLT"
	rows := func(job string) int {
		t.Helper()
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM inflight WHERE job_id = ?`, job).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, end := range []dlqreplay.JobState{dlqreplay.StateRunning, dlqreplay.StateSucceeded, dlqreplay.StateFailed, dlqreplay.StateCancelled} {
		id := "job-" + string(end)
		j := dlqreplay.Job{ID: id, DLQ: dlq, Action: dlqreplay.ActionReplay, State: dlqreplay.StateRunning, Created: time.Now()}
		if err := s.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordInFlight(ctx, id, dlq, []string{"a", "b", "c"}); err != nil {
			t.Fatal(err)
		}
		j.State = end
		if err := s.UpdateJob(ctx, j, 0, nil); err != nil {
			t.Fatal(err)
		}
		want := 0
		if end == dlqreplay.StateRunning {
			want = 3
		}
		if got := rows(id); got != want {
			t.Errorf("job %s: %d in-flight records, want %d", end, got, want)
		}
	}
	// An interrupted job keeps its records: the next job flags them.
	if _, err := s.db.ExecContext(ctx, `UPDATE jobs SET state = ? WHERE id = ?`, string(dlqreplay.StateInterrupted), "job-running"); err != nil {
		t.Fatal(err)
	}
	if got := rows("job-running"); got != 3 {
		t.Errorf("interrupted job: %d in-flight records, want 3", got)
	}
}
