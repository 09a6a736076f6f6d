package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// replicaLeaseTTL is audit.lease_ttl of the two replicas: short, so the
// failover is quick to watch, and still well above the 500ms flush.
const replicaLeaseTTL = 3 * time.Second

// TestReplicasShareOneAuditStore runs two queuewatch processes on one
// PostgreSQL audit store and a real RabbitMQ DLQ and drives both APIs: a
// replay started on A shows its progress on B and is cancelled from B; B
// answers 409 to a job or a browse while A runs; A killed with SIGKILL mid-job is marked
// interrupted by B once its lease expired, and a new job on B then leaves
// every message in the source queue (at most duplicated, none lost).
func TestReplicasShareOneAuditStore(t *testing.T) {
	admin := testenv.Rabbit(t)
	vh := admin.VHost("replicas")
	ch := testenv.Channel(t, vh)
	const n = 300
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m-%03d", i), Body: fmt.Appendf(nil, `{"n":%d}`, i)}
	}
	testenv.DeadLetter(t, ch, "orders", "orders.dlq", msgs...)
	db := testenv.Postgres(t)
	bin := buildBinary(t)
	a, b := startReplica(t, bin, vh, db.DSN), startReplica(t, bin, vh, db.DSN)
	dlq := "rabbitmq:main:" + vh + ":orders.dlq"

	// Started on A, watched on B: progress moves as A flushes it.
	job := a.startJob(t, dlq, 40)
	first := b.waitJob(t, job, "progress on B", func(j dlqreplay.Job) bool { return j.Progress.Moved > 0 })
	later := b.waitJob(t, job, "more progress on B", func(j dlqreplay.Job) bool { return j.Progress.Moved > first.Progress.Moved })
	t.Logf("B saw A's job move %d, then %d", first.Progress.Moved, later.Progress.Moved)
	if !b.listsJob(t, job) {
		t.Errorf("B's audit log does not list A's job %s", job)
	}
	// B's replays page lists it as running, with its cancel button.
	if code, page := b.do(t, http.MethodGet, "/replays", nil); code != http.StatusOK ||
		!strings.Contains(page, `data-cancel="`+job+`"`) {
		t.Errorf("B's /replays (%d) does not offer to cancel A's running job %s", code, job)
	}
	// One job per DLQ across replicas.
	if code, body := b.post(t, dlq, 40); code != http.StatusConflict || !strings.Contains(body, job) {
		t.Errorf("second job on B while A runs: %d %s; want 409 naming %s", code, body, job)
	}
	// Browsing on B would compete with A's job for its messages.
	if code, body := b.do(t, http.MethodGet, "/api/v1/dlqs/"+url.PathEscape(dlq)+"/messages", nil); code != http.StatusConflict || !strings.Contains(body, job) {
		t.Errorf("browse on B while A runs: %d %s; want 409 naming %s", code, body, job)
	}
	// Cancelled from B.
	asked := time.Now()
	if code, body := b.do(t, http.MethodDelete, "/api/v1/replays/"+url.PathEscape(job), nil); code != http.StatusAccepted {
		t.Fatalf("cancel on B: %d %s", code, body)
	}
	done := b.waitJob(t, job, "the cancel", func(j dlqreplay.Job) bool { return j.State == dlqreplay.StateCancelled })
	t.Logf("cancel from B took effect on A in %s (moved %d of %d)", time.Since(asked).Round(time.Millisecond), done.Progress.Moved, n)
	if inDLQ, inSource := depth(t, ch, "orders.dlq"), depth(t, ch, "orders"); inDLQ+inSource != n || int64(inSource) != done.Progress.Moved {
		t.Fatalf("after the cancel: %d in the DLQ + %d in orders, want %d (moved %d)", inDLQ, inSource, n, done.Progress.Moved)
	}

	// A dies mid-job (slower, so that the kill comes while it runs).
	// Copies are confirmed and acked in batches, so progress may show 0
	// for a while: the kill comes 2s in, with about 20 copies published.
	job = a.startJob(t, dlq, 10)
	b.waitJob(t, job, "A's second job on B", func(j dlqreplay.Job) bool { return j.State == dlqreplay.StateRunning })
	time.Sleep(2 * time.Second)
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = a.cmd.Wait()
	if code, body := b.post(t, dlq, -1); code != http.StatusConflict {
		t.Errorf("new job on B right after A died: %d %s; want 409 until A's lease expires", code, body)
	}
	gone := b.waitJob(t, job, "A's job interrupted", func(j dlqreplay.Job) bool { return j.State == dlqreplay.StateInterrupted })
	failover := time.Since(killed)
	t.Logf("B marked A's job interrupted %s after SIGKILL (lease TTL %s): %q", failover.Round(time.Millisecond), replicaLeaseTTL, gone.Error)
	if failover < replicaLeaseTTL-time.Second {
		t.Errorf("interrupted after %s, before the lease TTL %s", failover, replicaLeaseTTL)
	}
	if inDLQ, inSource := depth(t, ch, "orders.dlq"), depth(t, ch, "orders"); inDLQ+inSource < n {
		t.Fatalf("after A died: %d in the DLQ + %d in orders, fewer than %d", inDLQ, inSource, n)
	}
	var next string
	deadline := time.Now().Add(10 * time.Second)
	for next == "" {
		code, body := b.post(t, dlq, -1)
		switch {
		case code == http.StatusAccepted:
			next = decodeJob(t, body).ID
		case code != http.StatusConflict || time.Now().After(deadline):
			t.Fatalf("new job on B after A's lease expired: %d %s", code, body)
		default:
			time.Sleep(200 * time.Millisecond) // RabbitMQ may still hold A's consumer
		}
	}
	b.waitJob(t, next, "B's job", func(j dlqreplay.Job) bool { return j.State == dlqreplay.StateSucceeded })
	if inDLQ := depth(t, ch, "orders.dlq"); inDLQ != 0 {
		t.Errorf("%d messages left in the DLQ", inDLQ)
	}
	seen := drain(t, ch, "orders")
	for _, m := range msgs {
		if seen[m.MessageId] == 0 {
			t.Errorf("message %s lost", m.MessageId)
		}
	}
	total := 0
	for _, c := range seen {
		total += c
	}
	t.Logf("orders holds %d copies of the %d messages (%d duplicates from the kill)", total, n, total-len(seen))
}

// buildBinary builds queuewatch from this package into the test's temp dir.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "queuewatch")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type replica struct {
	cmd  *exec.Cmd
	base string
}

// startReplica starts `queuewatch serve` on a free port, watching the
// RabbitMQ vhost, with the audit store in the PostgreSQL database dsn, and
// waits for it to answer.
func startReplica(t *testing.T, bin, vhost, dsn string) *replica {
	t.Helper()
	listen := fmt.Sprintf("127.0.0.1:%d", testenv.FreePorts(t, 1)[0])
	dir := t.TempDir()
	path := filepath.Join(dir, "queuewatch.yaml")
	conf := fmt.Sprintf(`listen: %s
data_dir: %s
poll_interval: 2s
alerts: {window: 3}
history: 1m
rabbitmq:
  - name: main
    url: amqp://guest:guest@127.0.0.1:5672/%s
    management_url: %s
    vhosts: [%q]
audit:
  driver: postgres
  dsn: %s
  lease_ttl: %s
`, listen, dir, url.PathEscape(vhost), testenv.ManagementURL, vhost, dsn, replicaLeaseTTL)
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	logs, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", path)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{cmd: cmd, base: "http://" + listen}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		_ = logs.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logs.Name())
			t.Logf("replica %s log:\n%s", listen, out)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(r.base + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logs.Name())
			t.Fatalf("replica on %s did not start: %v\n%s", listen, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (r *replica) do(t *testing.T, method, path string, body any) (int, string) {
	t.Helper()
	var rd bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = *bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, r.base+path, &rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	return resp.StatusCode, out.String()
}

// post asks for a replay of everything in dlq at rate messages per second.
func (r *replica) post(t *testing.T, dlq string, rate float64) (int, string) {
	t.Helper()
	return r.do(t, http.MethodPost, "/api/v1/dlqs/"+url.PathEscape(dlq)+"/replay",
		map[string]any{"selection": map[string]any{"all": true}, "rate": rate})
}

// startJob starts a replay on r. A 409 is retried for a while: a job
// shows its final state a moment before its locks are released.
func (r *replica) startJob(t *testing.T, dlq string, rate float64) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, body := r.post(t, dlq, rate)
		switch {
		case code == http.StatusAccepted:
			return decodeJob(t, body).ID
		case code != http.StatusConflict || time.Now().After(deadline):
			t.Fatalf("start a replay on %s: %d %s", r.base, code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func decodeJob(t *testing.T, body string) dlqreplay.Job {
	t.Helper()
	var got struct{ Job dlqreplay.Job }
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.Job.ID == "" {
		t.Fatalf("not a job: %v %s", err, body)
	}
	return got.Job
}

// waitJob polls the job on r until ok holds (20s at most).
func (r *replica) waitJob(t *testing.T, id, what string, ok func(dlqreplay.Job) bool) dlqreplay.Job {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := r.do(t, http.MethodGet, "/api/v1/replays/"+url.PathEscape(id), nil)
		if code == http.StatusOK {
			if j := decodeJob(t, body); ok(j) {
				return j
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s on %s: %d %s", what, r.base, code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// listsJob reports whether r's audit log lists job.
func (r *replica) listsJob(t *testing.T, job string) bool {
	t.Helper()
	code, body := r.do(t, http.MethodGet, "/api/v1/audit", nil)
	return code == http.StatusOK && strings.Contains(body, job)
}

// depth is the queue's exact message count (a passive declare).
func depth(t *testing.T, ch *amqp.Channel, q string) int {
	t.Helper()
	info, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return info.Messages
}

// drain takes every message from q and counts them by message id.
func drain(t *testing.T, ch *amqp.Channel, q string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for {
		d, ok, err := ch.Get(q, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return seen
		}
		seen[d.MessageId]++
	}
}
