package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

func TestStoreSurvivesRestart(t *testing.T) { forEngines(t, testStoreSurvivesRestart) }

func testStoreSurvivesRestart(t *testing.T, e engine, db string) {
	ctx := context.Background()
	s := e.open(t, db)
	running := dlqreplay.Job{
		ID: "j1", DLQ: "rabbitmq:c:/:q.dlq", Action: dlqreplay.ActionReplay, Who: "ann",
		State: dlqreplay.StateRunning, Selection: dlqreplay.Selection{All: true}, Created: time.Now(),
	}
	done := dlqreplay.Job{
		ID: "j2", DLQ: "rabbitmq:c:/:q.dlq", Action: dlqreplay.ActionDelete, Who: "bob",
		State: dlqreplay.StateRunning, Created: time.Now(),
	}
	for _, j := range []dlqreplay.Job{running, done} {
		if err := s.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	running.Progress.Moved, running.Progress.ToMove = 2, 10
	if err := s.UpdateJob(ctx, running, 0, []dlqreplay.Outcome{
		{MessageID: "a", Result: dlqreplay.ResultMoved, Target: "/q"},
		{MessageID: "b", Result: dlqreplay.ResultMoved},
	}); err != nil {
		t.Fatal(err)
	}
	done.State, done.Finished, done.Progress.Moved = dlqreplay.StateSucceeded, time.Now(), 1
	if err := s.UpdateJob(ctx, done, 0, []dlqreplay.Outcome{{MessageID: "c", Result: dlqreplay.ResultDeleted}}); err != nil {
		t.Fatal(err)
	}
	bin := []byte{0xff, 0x00, 0xfe}
	ids, err := s.Archive(ctx, []dlqreplay.Archived{{
		JobID: "j2", DLQ: done.DLQ, MessageID: "c", Body: bin,
		Headers: []queue.Header{{Key: "k\xff", Value: bin, Kind: "bytes"}}, Properties: map[string]string{"message_id": "c"},
	}})
	if err != nil || len(ids) != 1 {
		t.Fatalf("archive: %v %v", ids, err)
	}
	// The process dies without finishing j1.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(e.crash)

	s = e.open(t, db)
	defer func() { _ = s.Close() }()
	if len(s.Interrupted) != 1 || s.Interrupted[0] != "j1" {
		t.Fatalf("interrupted = %v", s.Interrupted)
	}
	j, err := s.Job(ctx, "j1")
	if err != nil || j.State != dlqreplay.StateInterrupted || j.Progress.Moved != 2 || j.Progress.ToMove != 10 || j.Who != "ann" ||
		!j.Selection.All || j.Action != dlqreplay.ActionReplay {
		t.Fatalf("j1 = %+v, %v", j, err)
	}
	if j, _ := s.Job(ctx, "j2"); j.State != dlqreplay.StateSucceeded {
		t.Fatalf("j2 = %+v", j)
	}
	outs, err := s.Outcomes(ctx, "j1")
	if err != nil || len(outs) != 2 || outs[0].MessageID != "a" || outs[0].Target != "/q" || outs[0].Result != dlqreplay.ResultMoved {
		t.Fatalf("outcomes = %+v, %v", outs, err)
	}
	doneIDs, err := s.Done(ctx, done.DLQ, []string{"a", "c", "x"}, dlqreplay.ResultMoved, dlqreplay.ResultDeleted)
	if err != nil || !doneIDs["a"] || !doneIDs["c"] || doneIDs["x"] {
		t.Fatalf("done = %v, %v", doneIDs, err)
	}
	arch, err := s.Archived(ctx, dlqreplay.ArchiveQuery{JobID: "j2"})
	if err != nil || len(arch) != 1 || !bytes.Equal(arch[0].Body, bin) || arch[0].Headers[0].Key != "k\xff" ||
		!bytes.Equal(arch[0].Headers[0].Value, bin) || arch[0].Properties["message_id"] != "c" {
		t.Fatalf("archived = %+v, %v", arch, err)
	}
	if err := s.MarkRestored(ctx, ids, "rabbitmq:c:/:other"); err != nil {
		t.Fatal(err)
	}
	if arch, _ := s.Archived(ctx, dlqreplay.ArchiveQuery{IDs: ids}); arch[0].RestoredTo != "rabbitmq:c:/:other" || arch[0].RestoredAt.IsZero() {
		t.Fatalf("restored = %+v", arch[0])
	}
	if _, err := s.Job(ctx, "nope"); !errors.Is(err, dlqreplay.ErrJobNotFound) {
		t.Fatalf("missing job: %v", err)
	}
	jobs, err := s.Jobs(ctx, dlqreplay.JobQuery{DLQ: done.DLQ, Limit: 10})
	if err != nil || len(jobs) != 2 {
		t.Fatalf("jobs = %d, %v", len(jobs), err)
	}
}

// TestUpdateJobRetriesOutcomes: a flush that is retried with the same
// sequence numbers replaces what an earlier attempt stored instead of
// failing or duplicating it.
func TestUpdateJobRetriesOutcomes(t *testing.T) { forEngines(t, testUpdateJobRetriesOutcomes) }

func testUpdateJobRetriesOutcomes(t *testing.T, e engine, db string) {
	ctx := context.Background()
	s := e.open(t, db)
	defer func() { _ = s.Close() }()
	j := dlqreplay.Job{ID: "j", DLQ: "kafka:c::t.DLT", Action: dlqreplay.ActionReplay, State: dlqreplay.StateRunning, Created: time.Now()}
	if err := s.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	first := []dlqreplay.Outcome{{MessageID: "a", Result: dlqreplay.ResultFailed}, {MessageID: "b", Result: dlqreplay.ResultMoved}}
	if err := s.UpdateJob(ctx, j, 0, first); err != nil {
		t.Fatal(err)
	}
	again := []dlqreplay.Outcome{{MessageID: "b", Result: dlqreplay.ResultMoved, PossibleDuplicate: true}, {MessageID: "c", Result: dlqreplay.ResultSkipped}}
	if err := s.UpdateJob(ctx, j, 1, again); err != nil {
		t.Fatal(err)
	}
	outs, err := s.Outcomes(ctx, "j")
	if err != nil || len(outs) != 3 || outs[0].MessageID != "a" || !outs[1].PossibleDuplicate || outs[2].MessageID != "c" {
		t.Fatalf("outcomes = %+v, %v", outs, err)
	}
}

// TestDryRunCountsAndNoteKept: what a dry run would move and its note
// (schema version 2) come back from the store as the job reported them.
func TestDryRunCountsAndNoteKept(t *testing.T) { forEngines(t, testDryRunCountsAndNoteKept) }

func testDryRunCountsAndNoteKept(t *testing.T, e engine, db string) {
	ctx := context.Background()
	s := e.open(t, db)
	j := dlqreplay.Job{
		ID: "dry", DLQ: "rabbitmq:c:/:q.dlq", Action: dlqreplay.ActionReplay, DryRun: true,
		State: dlqreplay.StateRunning, Created: time.Now(),
	}
	if err := s.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	j.State, j.Finished, j.Note = dlqreplay.StateSucceeded, time.Now(), "3 messages not read: a look would spend their last delivery"
	j.Progress = dlqreplay.Progress{Depth: 10, ToMove: 10, WouldMove: 7, Remaining: 3}
	if err := s.UpdateJob(ctx, j, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = e.open(t, db)
	defer func() { _ = s.Close() }()
	got, err := s.Job(ctx, "dry")
	if err != nil || got.Progress != j.Progress || got.Note != j.Note {
		t.Fatalf("job = %+v, %v; want progress %+v and note %q", got, err, j.Progress, j.Note)
	}
}

// TestArchiveQueriesTakeAnyNumberOfIDs: a restore of an 800 KB list of
// archive ids (more than SQLite's 32766 bound variables) reads and marks
// them in batches instead of failing with "too many SQL variables".
func TestArchiveQueriesTakeAnyNumberOfIDs(t *testing.T) {
	forEngines(t, testArchiveQueriesTakeAnyNumberOfIDs)
}

func testArchiveQueriesTakeAnyNumberOfIDs(t *testing.T, e engine, db string) {
	ctx := context.Background()
	s := e.open(t, db)
	defer func() { _ = s.Close() }()
	stored, err := s.Archive(ctx, []dlqreplay.Archived{
		{JobID: "j", DLQ: "kafka:c::t.DLT", MessageID: "a"},
		{JobID: "j", DLQ: "kafka:c::t.DLT", MessageID: "b"},
		{JobID: "j", DLQ: "kafka:c::t.DLT", MessageID: "c"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, 100_000) // about 800 KB as JSON
	for i := range ids {
		ids[i] = int64(len(ids) - i) // newest first: the answer is still in archive order
	}
	if err := s.MarkDeleted(ctx, ids); err != nil {
		t.Fatalf("mark deleted: %v", err)
	}
	if err := s.MarkRestored(ctx, ids, "kafka:c::t"); err != nil {
		t.Fatalf("mark restored: %v", err)
	}
	got, err := s.Archived(ctx, dlqreplay.ArchiveQuery{IDs: ids, Limit: 2})
	if err != nil || len(got) != 2 || got[0].ID != stored[0] || got[1].ID != stored[1] || !got[0].Deleted || got[1].RestoredTo != "kafka:c::t" {
		t.Fatalf("archived = %+v, %v", got, err)
	}
}

// TestScopedListsFilterBeforeTheLimit: one who may read one DLQ gets its
// newest jobs, archived messages and body reads, however many newer rows
// other DLQs have.
func TestScopedListsFilterBeforeTheLimit(t *testing.T) { forEngines(t, testScopedLists) }

func testScopedLists(t *testing.T, e engine, db string) {
	ctx := context.Background()
	s := e.open(t, db)
	defer func() { _ = s.Close() }()
	const mine, theirs = "rabbitmq:c:/:team-a.dlq", "rabbitmq:c:/:team-b.dlq"
	at := time.Now().Add(-time.Hour)
	add := func(id, dlq string) {
		at = at.Add(time.Second)
		if err := s.CreateJob(ctx, dlqreplay.Job{ID: id, DLQ: dlq, Action: dlqreplay.ActionDelete, State: dlqreplay.StateSucceeded, Created: at}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Archive(ctx, []dlqreplay.Archived{{JobID: id, DLQ: dlq, MessageID: id + "-m"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordBodyRead(ctx, BodyRead{At: at, Who: "x", DLQ: dlq, Surface: "page", Messages: []string{id + "-m"}}); err != nil {
			t.Fatal(err)
		}
		group := strings.TrimSuffix(strings.TrimPrefix(dlq, "rabbitmq:c:/:"), ".dlq") + ":billing" // a ':' in a group name reads back one way
		if _, err := s.RecordOffsetReset(ctx, OffsetReset{At: at, Who: "x", Broker: "kafka", Cluster: "prod", Group: group, Result: "ok", Entry: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	add("a1", mine)
	for i := range 5 {
		add("b"+string(rune('0'+i)), theirs)
	}
	seen := func(id string) bool { return id == mine }
	jobs, err := s.Jobs(ctx, dlqreplay.JobQuery{Visible: seen, Limit: 2})
	if err != nil || len(jobs) != 1 || jobs[0].ID != "a1" {
		t.Errorf("team A's jobs = %v %v, want a1", jobs, err)
	}
	arch, err := s.Archived(ctx, dlqreplay.ArchiveQuery{Visible: seen, Limit: 1})
	if err != nil || len(arch) != 1 || arch[0].DLQ != mine {
		t.Errorf("team A's archive = %v %v", arch, err)
	}
	reads, err := s.BodyReads(ctx, ReadQuery{Visible: seen, Limit: 2})
	if err != nil || len(reads) != 1 || reads[0].DLQ != mine {
		t.Errorf("team A's body reads = %v %v", reads, err)
	}
	resets, err := s.FindOffsetResets(ctx, ResetQuery{Visible: func(b, c, g string) bool { return b == "kafka" && c == "prod" && g == "team-a:billing" }, Limit: 2})
	if err != nil || len(resets) != 1 || resets[0].Group != "team-a:billing" {
		t.Errorf("team A's resets = %v %v", resets, err)
	}
	none := func(string) bool { return false }
	if jobs, err := s.Jobs(ctx, dlqreplay.JobQuery{Visible: none}); err != nil || len(jobs) != 0 {
		t.Errorf("who sees no DLQ lists jobs %v %v", jobs, err)
	}
	if all, _ := s.Jobs(ctx, dlqreplay.JobQuery{Limit: 2}); len(all) != 2 || all[0].DLQ != theirs {
		t.Errorf("unscoped, the newest two: %v", all)
	}
}

// TestListsCarryTheCountOfSelectedIDs: a job's selected ids (10,000 here)
// come back whole from the job itself and as a count in lists, whose rows
// do not read them; a row written before selection_ids (ids inline) is
// listed the same way.
func TestListsCarryTheCountOfSelectedIDs(t *testing.T) { forEngines(t, testListsCarryTheCount) }

func testListsCarryTheCount(t *testing.T, e engine, db string) {
	ctx := context.Background()
	s := e.open(t, db)
	defer func() { _ = s.Close() }()
	ids := make([]string, dlqreplay.MaxSelectionIDs)
	for i := range ids {
		ids[i] = fmt.Sprintf("kafka:c::t.DLT/0/%d", i)
	}
	j := dlqreplay.Job{
		ID: "big", DLQ: "kafka:c::t.DLT", Action: dlqreplay.ActionReplay, State: dlqreplay.StateRunning,
		Created: time.Now(), Selection: dlqreplay.Selection{IDs: ids}.Counted(),
	}
	if err := s.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	var inline string
	if err := s.db.QueryRowContext(ctx, `SELECT selection FROM jobs WHERE id = ?`, "big").Scan(&inline); err != nil || len(inline) > 100 {
		t.Fatalf("selection column holds %d bytes (%v): the ids belong in selection_ids", len(inline), err)
	}
	got, err := s.Job(ctx, "big")
	if err != nil || !slices.Equal(got.Selection.IDs, ids) || got.Selection.IDCount != len(ids) {
		t.Fatalf("job has %d ids, count %d, %v; want all %d", len(got.Selection.IDs), got.Selection.IDCount, err, len(ids))
	}
	old, _ := json.Marshal(dlqreplay.Selection{IDs: []string{"a", "b"}})
	if _, err := s.db.ExecContext(ctx, `INSERT INTO jobs (id, dlq, action, mode, who, dry_run, selection, target, state, created, owner, heartbeat)
		VALUES ('old', 'kafka:c::t.DLT', 'replay', '', 'ana', ?, ?, '{}', 'succeeded', 1, '', 0)`, false, string(old)); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Jobs(ctx, dlqreplay.JobQuery{})
	if err != nil || len(jobs) != 2 {
		t.Fatalf("jobs = %+v, %v", jobs, err)
	}
	for _, j := range jobs {
		want := map[string]int{"big": len(ids), "old": 2}[j.ID]
		if j.Selection.IDs != nil || j.Selection.IDCount != want {
			t.Errorf("listed job %s: %d ids, count %d; want no ids and count %d", j.ID, len(j.Selection.IDs), j.Selection.IDCount, want)
		}
	}
}
