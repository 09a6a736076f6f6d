package rabbitmq

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

func TestBrowseLeavesQueueAsItWas(t *testing.T) {
	w := newWorld(t, worldOpts{})
	binary := []byte{0x00, 0xff, 0xfe, 0x01}
	var want []string
	var msgs []amqp.Publishing
	for i := range 30 {
		id := fmt.Sprintf("m%02d", i)
		want = append(want, id)
		msgs = append(msgs, deadLetter(id, []byte(fmt.Sprintf(`{"n":%d}`, i)), "rejected", nil))
	}
	msgs[3] = deadLetter("m03", binary, "expired", amqp.Table{
		"x-exception-message":    "Order 7 has no lines",
		"x-exception-stacktrace": "org.springframework.amqp.AmqpRejectAndDontRequeueException: x\nCaused by: java.lang.IllegalStateException: Order 7 has no lines\n\tat x",
		"x-original-exchange":    "orders",
		"x-original-routingKey":  "orders.created",
		"bad-utf8":               string([]byte{'a', 0xff, 'b'}),
		"bin":                    []byte{1, 2, 3},
	})
	w.publish("", "work.dlq", msgs...)
	ctx := ctxT(t, time.Minute)

	p1, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{Limit: 25, After: p1.Next})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range append(p1.Messages, p2.Messages...) {
		got = append(got, m.ID)
	}
	if !slices.Equal(got, want) || p1.Next != "10" || p2.Next != "" {
		t.Fatalf("pages = %v (next %q, %q), want %v", got, p1.Next, p2.Next, want)
	}
	if after := w.peekIDs("work.dlq"); !slices.Equal(after, want) {
		t.Fatalf("queue after browsing = %v, want %v", after, want)
	}

	m := p1.Messages[3]
	if !bytes.Equal(m.Body, binary) {
		t.Errorf("binary body = %x", m.Body)
	}
	if kind, _, _ := m.BodyView(0); kind != queue.BodyBinary {
		t.Errorf("binary body view kind = %s", kind)
	}
	d := m.Death
	if len(d.Deaths) != 1 || d.Deaths[0].Queue != "work" || d.Deaths[0].Reason != "expired" || d.Deaths[0].Count != 1 ||
		!slices.Equal(d.Deaths[0].RoutingKeys, []string{"work"}) || d.Deaths[0].Time.Unix() != 1_700_000_000 {
		t.Errorf("x-death = %+v", d.Deaths)
	}
	if d.FirstQueue != "work" || d.OriginalExchange != "orders" || d.OriginalRoutingKey != "orders.created" ||
		d.ExceptionClass != "java.lang.IllegalStateException" || d.ExceptionMessage != "Order 7 has no lines" {
		t.Errorf("death info = %+v", d)
	}
	if v, _ := m.Header("bad-utf8"); !bytes.Equal(v, []byte{'a', 0xff, 'b'}) {
		t.Errorf("invalid UTF-8 header = %x", v)
	}
	if h := findHeader(m, "bad-utf8"); h.Text() != "0x61ff62" {
		t.Errorf("invalid UTF-8 header text = %q", h.Text())
	}
	if v, _ := m.Header("bin"); !bytes.Equal(v, []byte{1, 2, 3}) {
		t.Errorf("byte-array header = %x", v)
	}
	groups := p1.Groups
	if len(groups) != 2 || groups[0].Count != 9 || groups[0].Signature != (queue.FailureSignature{Source: "work", Reason: "rejected"}) ||
		groups[1].Signature.ExceptionClass != "java.lang.IllegalStateException" {
		t.Errorf("groups = %+v", groups)
	}
}

func findHeader(m queue.Message, key string) queue.Header {
	for _, h := range m.Headers {
		if h.Key == key {
			return h
		}
	}
	return queue.Header{}
}

func TestRealDeadLetterIsDecodedAndReplayed(t *testing.T) {
	w := newWorld(t, worldOpts{})
	w.declare("src", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work.dlq"})
	w.publish("", "src", amqp.Publishing{MessageId: "real-1", Body: []byte("hello")})
	w.a.Do("POST", testenv.APIPath("queues", w.vh, "src", "get"), map[string]any{"count": 1, "ackmode": "reject_requeue_false", "encoding": "auto"})
	deadline := time.Now().Add(10 * time.Second)
	for w.depth("work.dlq") != 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	ctx := ctxT(t, time.Minute)
	p, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{})
	if err != nil || len(p.Messages) != 1 {
		t.Fatalf("browse = %+v, %v", p, err)
	}
	if d := p.Messages[0].Death; d.Source() != "src" || d.Reason() != "rejected" || d.FirstQueue != "src" {
		t.Fatalf("death = %+v", d)
	}
	r, err := w.svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}, Who: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.State != dlqreplay.StateSucceeded || r.Job.Progress.Moved != 1 || r.Outcomes[0].Target != "/src" {
		t.Fatalf("receipt = %+v", r)
	}
	got := w.drain("src")
	if len(got) != 1 || got[0].MessageId != "real-1" || string(got[0].Body) != "hello" {
		t.Fatalf("src = %+v", got)
	}
	if n, _ := got[0].Headers[HeaderReplayCount].(string); n != "1" {
		t.Errorf("replay count = %v", got[0].Headers[HeaderReplayCount])
	}
	if id, _ := got[0].Headers[HeaderReplayID].(string); !strings.HasPrefix(id, r.Job.ID+".") {
		t.Errorf("replay id = %q, job %s", id, r.Job.ID)
	}
	if w.depth("work.dlq") != 0 {
		t.Errorf("dlq not empty")
	}
}

func TestQuorumDeliveryLimitBrowsedTenTimes(t *testing.T) {
	w := newWorld(t, worldOpts{dlqArgs: amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int64(3)}})
	var want []string
	for i := range 5 {
		id := fmt.Sprintf("q%d", i)
		want = append(want, id)
		w.publish("", "work.dlq", deadLetter(id, []byte("x"), "rejected", nil))
	}
	ctx := ctxT(t, time.Minute)
	var refused int
	for i := range 10 {
		p, err := w.svc.Browse(ctx, w.dlq, dlqreplay.BrowseOptions{Limit: 5 - i%2})
		switch {
		case errors.Is(err, dlqreplay.ErrDeliveryLimit), err == nil && !p.CachedAt.IsZero():
			refused++
		case err != nil:
			t.Fatal(err)
		}
	}
	if refused == 0 {
		t.Error("browsing never refused")
	}
	// A fresh backend (another instance) does not know about the refusal:
	// it must still lose nothing.
	other, _ := New(Options{Cluster: access(t, testCluster, testenv.DefaultAMQPURL, testenv.ManagementURLWithAuth)})
	ref, _ := dlqreplay.ParseID(w.dlq)
	for range 3 {
		_, _ = other.Browse(ctx, ref, dlqreplay.BrowseOptions{Limit: 5})
	}
	got := w.peekIDs("work.dlq")
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("after browsing, dlq = %v, want %v", got, want)
	}
}

func TestTwoJobsOnOneDLQ(t *testing.T) {
	w := newWorld(t, worldOpts{})
	var msgs []amqp.Publishing
	for i := range 300 {
		msgs = append(msgs, deadLetter(fmt.Sprint(i), []byte("x"), "rejected", nil))
	}
	w.publish("", "work.dlq", msgs...)
	ctx := ctxT(t, time.Minute)
	req := dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}, Rate: 30}

	// Two requests at once in one instance: exactly one conflict.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	jobs := make([]dlqreplay.Job, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			jobs[i], errs[i] = w.svc.Start(ctx, req)
		}()
	}
	wg.Wait()
	var started []dlqreplay.Job
	for i, err := range errs {
		var ce *dlqreplay.ConflictError
		switch {
		case err == nil:
			started = append(started, jobs[i])
		case errors.As(err, &ce) && errors.Is(err, dlqreplay.ErrJobRunning):
		default:
			t.Fatalf("start: %v", err)
		}
	}
	if len(started) != 1 {
		t.Fatalf("started %d jobs: %v", len(started), errs)
	}
	for _, err := range errs {
		var ce *dlqreplay.ConflictError
		if errors.As(err, &ce) && ce.JobID != started[0].ID {
			t.Errorf("conflict names job %s, running is %s", ce.JobID, started[0].ID)
		}
	}

	// Another instance (its own store and backend, same broker) is refused
	// by the broker's exclusive consumer and told the running job's id.
	w2 := &world{t: t, dir: t.TempDir()}
	w2.openService(worldOpts{})
	_, err := w2.svc.Start(ctx, req)
	var ce *dlqreplay.ConflictError
	if !errors.As(err, &ce) || ce.JobID != started[0].ID {
		t.Fatalf("other instance: %v, want a conflict naming %s", err, started[0].ID)
	}
	for _, svc := range []*dlqreplay.Service{w.svc, w2.svc} {
		if err := svc.Cancel(started[0].ID); err == nil {
			r, _ := svc.Wait(ctx, started[0].ID)
			if r.Job.State != dlqreplay.StateCancelled {
				t.Errorf("cancelled job state = %s", r.Job.State)
			}
			if got := int(r.Job.Progress.Moved) + w.depth("work.dlq"); got != 300 || w.depth("work") != int(r.Job.Progress.Moved) {
				t.Errorf("moved %d, dlq %d, work %d", r.Job.Progress.Moved, w.depth("work.dlq"), w.depth("work"))
			}
		}
	}
}

func TestPoisonDryRunDeleteRestore(t *testing.T) {
	w := newWorld(t, worldOpts{maxReplays: 2})
	w.publish("", "work.dlq",
		deadLetter("a", []byte("a"), "rejected", nil),
		deadLetter("poison", []byte("p"), "rejected", amqp.Table{HeaderReplayCount: int64(2)}),
		deadLetter("b", []byte{0xff, 0x00}, "rejected", amqp.Table{"x-bin": []byte{0xde, 0xad}}),
	)
	ctx := ctxT(t, time.Minute)
	dry, err := w.svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	wantDry := []dlqreplay.Outcome{
		{MessageID: "a", Result: dlqreplay.ResultWouldMove, Target: "/work", Source: "work"},
		{MessageID: "poison", Result: dlqreplay.ResultSkipped, Source: "work", Reason: "poison: replayed 2 times (max_replays 2)"},
		{MessageID: "b", Result: dlqreplay.ResultWouldMove, Target: "/work", Source: "work"},
	}
	if !slices.Equal(dry.Outcomes, wantDry) {
		t.Fatalf("dry run = %+v\nwant %+v", dry.Outcomes, wantDry)
	}
	if got := w.peekIDs("work.dlq"); !slices.Equal(got, []string{"a", "poison", "b"}) || w.depth("work") != 0 {
		t.Fatalf("dry run changed queues: dlq %v", got)
	}

	del, err := w.svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Action: dlqreplay.ActionDelete, Selection: dlqreplay.Selection{IDs: []string{"b"}}})
	if err != nil || del.Job.Progress.Moved != 1 {
		t.Fatalf("delete = %+v, %v", del, err)
	}
	if got := w.peekIDs("work.dlq"); !slices.Equal(got, []string{"a", "poison"}) {
		t.Fatalf("after delete dlq = %v", got)
	}
	arch, err := w.svc.Archived(ctx, dlqreplay.ArchiveQuery{DLQ: w.dlq, Limit: 10})
	if err != nil || len(arch) != 1 || arch[0].MessageID != "b" || !bytes.Equal(arch[0].Body, []byte{0xff, 0x00}) {
		t.Fatalf("archive = %+v, %v", arch, err)
	}
	w.declare("elsewhere", nil)
	target := dlqreplay.Ref{Broker: queue.RabbitMQ, Cluster: testCluster, VHost: w.vh, Name: "elsewhere"}.ID()
	if _, err := w.svc.Restore(ctx, dlqreplay.RestoreRequest{JobID: del.Job.ID, Target: target}); err != nil {
		t.Fatal(err)
	}
	got := w.drain("elsewhere")
	if len(got) != 1 || got[0].MessageId != "b" || !bytes.Equal(got[0].Body, []byte{0xff, 0x00}) ||
		!bytes.Equal(got[0].Headers["x-bin"].([]byte), []byte{0xde, 0xad}) {
		t.Fatalf("restored = %+v", got)
	}

	r, err := w.svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Job.Progress; p.Moved != 1 || p.Skipped != 1 || p.ToMove != 2 || p.Remaining != 0 {
		t.Fatalf("progress = %+v", p)
	}
	if got := w.peekIDs("work.dlq"); !slices.Equal(got, []string{"poison"}) {
		t.Fatalf("poison not left in the dlq: %v", got)
	}
	totals := map[string]int64{}
	for _, c := range w.svc.Replayed() {
		totals[c.Result] += c.Value
	}
	// ok: the delete, the restore (counted like any job since issue 21)
	// and the replay.
	if totals["ok"] != 3 || totals["skipped"] != 1 || totals["failed"] != 0 {
		t.Errorf("replayed totals = %v", totals)
	}

	if _, err := w.svc.Run(ctx, dlqreplay.Request{
		DLQ: w.dlq, Action: dlqreplay.ActionMove,
		Target: dlqreplay.Target{Name: "missing"}, Selection: dlqreplay.Selection{All: true},
	}); !errors.Is(err, dlqreplay.ErrTargetMissing) {
		t.Fatalf("move to a missing queue: %v", err)
	}
	// schemathesis found a 256-byte name answered as a broker failure (502).
	long := strings.Repeat("é", 128)
	if _, err := w.svc.Run(ctx, dlqreplay.Request{
		DLQ: w.dlq, Action: dlqreplay.ActionMove,
		Target: dlqreplay.Target{Name: long}, Selection: dlqreplay.Selection{All: true},
	}); !errors.Is(err, dlqreplay.ErrInvalidRequest) {
		t.Fatalf("move to a 256-byte queue name: %v", err)
	}
	if got := w.peekIDs("work.dlq"); !slices.Equal(got, []string{"poison"}) {
		t.Fatalf("refused move changed the dlq: %v", got)
	}
}

func TestBigAndOneOfMany(t *testing.T) {
	w := newWorld(t, worldOpts{})
	big := bytes.Repeat([]byte{0xab}, 16<<20)
	w.publish("", "work.dlq", deadLetter("big", big, "rejected", nil))
	var msgs []amqp.Publishing
	for i := range 5000 {
		msgs = append(msgs, deadLetter(fmt.Sprintf("n%04d", i), []byte("x"), "rejected", nil))
	}
	w.publish("", "work.dlq", msgs...)
	ctx := ctxT(t, 2*time.Minute)
	r, err := w.svc.Run(ctx, dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{IDs: []string{"n4321", "big"}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.Progress.Moved != 2 || r.Job.Progress.Depth != 5001 {
		t.Fatalf("progress = %+v", r.Job.Progress)
	}
	got := w.drain("work")
	if len(got) != 2 || got[0].MessageId != "big" || !bytes.Equal(got[0].Body, big) || got[1].MessageId != "n4321" {
		t.Fatalf("work got %d messages", len(got))
	}
	left := w.peekIDs("work.dlq")
	if len(left) != 4999 || slices.Contains(left, "n4321") || !slices.IsSorted(left) {
		t.Fatalf("dlq has %d, order kept %v", len(left), slices.IsSorted(left))
	}
}

// A replay refused half-way through Prepare (here: the vhost's connection
// limit stops the publishing connection) must give back the consumer's
// connection and its exclusive hold on the DLQ, and leave every message in
// place for the next attempt.
func TestFailedPrepareLeavesNothingBehind(t *testing.T) {
	w := newWorld(t, worldOpts{})
	var msgs []amqp.Publishing
	for i := range 10 {
		msgs = append(msgs, deadLetter(fmt.Sprint(i), []byte("x"), "rejected", nil))
	}
	w.publish("", "work.dlq", msgs...)
	limit := testenv.APIPath("vhost-limits", w.vh, "max-connections")
	// w.conn holds one connection: the job's consumer gets the second,
	// its publisher none.
	w.a.Do("PUT", limit, map[string]int{"value": 2})
	ctx := ctxT(t, time.Minute)
	req := dlqreplay.Request{DLQ: w.dlq, Selection: dlqreplay.Selection{All: true}, Who: "test"}
	if _, err := w.svc.Run(ctx, req); err == nil {
		t.Fatal("replay started with no connection left for its publisher")
	}
	if got := w.depth("work.dlq"); got != 10 {
		t.Fatalf("dlq holds %d after the failed start, want 10", got)
	}
	// The broker forgets a closed connection within moments; a leaked one
	// keeps the slot for good.
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var c *amqp.Connection
		if c, err = amqp.DialConfig(testenv.DefaultAMQPURL, amqp.Config{Vhost: w.vh}); err == nil {
			c.Close()
			break
		}
	}
	if err != nil {
		t.Fatalf("the failed replay kept its connection: %v", err)
	}

	w.a.Do("DELETE", limit, nil)
	r, err := w.svc.Run(ctx, req)
	if err != nil || r.Job.State != dlqreplay.StateSucceeded || r.Job.Progress.Moved != 10 {
		t.Fatalf("replay after the limit was lifted = %+v, %v", r.Job, err)
	}
	if w.depth("work") != 10 || w.depth("work.dlq") != 0 {
		t.Errorf("work %d, dlq %d after the replay, want 10 and 0", w.depth("work"), w.depth("work.dlq"))
	}
}
