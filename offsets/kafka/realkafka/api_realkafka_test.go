package realkafka

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
)

// queuewatch builds the queuewatch binary into a test's temporary folder
// (the build cache makes it a link): the tests run it as the operator
// does, a serve process and CLI processes.
func queuewatch(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "queuewatch")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/queuewatch/queuewatch/cmd/queuewatch").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// writeConfig writes a config of e's node as cluster "real", with its
// audit store in dataDir, and returns its path.
func (e *env) writeConfig(dataDir string) string {
	e.t.Helper()
	path := filepath.Join(e.t.TempDir(), "queuewatch.yaml")
	cfg := fmt.Sprintf("data_dir: %s\npoll_interval: 2s\nkafka:\n  - name: real\n    brokers: [%q]\n", dataDir, e.node.Addr())
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// server is a queuewatch serve process.
type server struct {
	t    *testing.T
	base string
}

// serve starts queuewatch serve (binary bin) with config and waits for /healthz; it is
// stopped (SIGTERM) when the test ends.
func (e *env) serve(bin, config string) *server {
	e.t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePorts(e.t, 1)[0])
	var logs strings.Builder
	cmd := exec.Command(bin, "serve", "--config", config, "--listen", addr)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	e.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				e.t.Errorf("serve exited on SIGTERM: %v\n%s", err, logs.String())
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			e.t.Error("serve did not stop on SIGTERM")
		}
	})
	s := &server{t: e.t, base: "http://" + addr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			e.t.Fatalf("serve exited: %v\n%s", err, logs.String())
		default:
		}
		if s.healthy() {
			return s
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("serve did not answer /healthz:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *server) healthy() bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/healthz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// call sends a JSON request and decodes the answer into v; it fails the
// test unless the status is want.
func (s *server) call(method, path, body string, want int, v any) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	text, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		s.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, text, want)
	}
	if err := json.Unmarshal(text, v); err != nil {
		s.t.Fatalf("%s %s: %v in %s", method, path, err, text)
	}
}

// resets are the applies serve recorded for e's group, newest first.
func (s *server) resets(e *env) []struct {
	Who, Result string
	PlanID      string `json:"plan_id"`
} {
	s.t.Helper()
	var list struct {
		Resets []struct {
			Who, Result string
			PlanID      string `json:"plan_id"`
		}
	}
	s.call(http.MethodGet, "/api/v1/groups/real/"+e.g+"/offsets/resets", "", http.StatusOK, &list)
	return list.Resets
}

// TestAPIOnRealKafka plans and applies through a running server's API on
// Kafka 4.4 and 4.0: the offsets kafka-consumer-groups --describe reads
// afterwards are the plan's, and every apply is in the audit log; a commit
// since the plan gives 409 (stale), and so does a live member.
func TestAPIOnRealKafka(t *testing.T) {
	eachVersion(t, apiOnRealKafka)
}

func apiOnRealKafka(t *testing.T, e *env) {
	s := e.serve(queuewatch(t), e.writeConfig(t.TempDir()))
	groupAPI := "/api/v1/groups/real/" + e.g + "/offsets"
	plan := func(to string) offsets.Plan {
		t.Helper()
		var p offsets.Plan
		s.call(http.MethodPost, groupAPI+"/plan", fmt.Sprintf(`{"to":%q,"topics":[%q]}`, to, e.topic), http.StatusOK, &p)
		return p
	}

	p := plan("shift:-4")
	if p.Totals.Reprocess != 3+4+4 || p.ApplyRefused != "" {
		t.Fatalf("plan: re-process %d (want 3+4+4: partition 0's log starts at 2), refused %q", p.Totals.Reprocess, p.ApplyRefused)
	}
	var rec offsets.Receipt
	s.call(http.MethodPost, groupAPI+"/apply", `{"plan_id":"`+p.ID+`"}`, http.StatusOK, &rec)
	if rec.Result != offsets.ResultOK || len(rec.Partitions) != 3 {
		t.Fatalf("receipt %+v", rec)
	}
	desc := e.describe(e.g)
	for _, pp := range p.Partitions {
		key := fmt.Sprintf("%s:%d", pp.Topic, pp.Partition)
		if desc[key] != fmt.Sprint(*pp.Target) {
			t.Errorf("%s: kafka-consumer-groups --describe says %s, the plan's target is %d", key, desc[key], *pp.Target)
		}
	}
	if log := s.resets(e); len(log) != 1 || log[0].PlanID != p.ID || log[0].Result != "ok" || log[0].Who == "" {
		t.Errorf("audit after the apply: %+v", log)
	}

	// A commit since the plan: 409, nothing committed, audited as stale.
	p = plan("earliest")
	e.commit(e.g, map[int32]int64{2: 3})
	var refused struct{ Error string }
	s.call(http.MethodPost, groupAPI+"/apply", `{"plan_id":"`+p.ID+`"}`, http.StatusConflict, &refused)
	if !strings.Contains(refused.Error, "re-plan") {
		t.Errorf("stale apply: %q", refused.Error)
	}
	if desc := e.describe(e.g); desc[e.topic+":0"] != "2" || desc[e.topic+":1"] != "1" || desc[e.topic+":2"] != "3" {
		t.Errorf("after the stale apply kafka-consumer-groups --describe says %v, want 2 1 3", desc)
	}
	if log := s.resets(e); len(log) != 2 || log[0].PlanID != p.ID || log[0].Result != string(offsets.ResultStale) {
		t.Errorf("audit after the stale apply: %+v", log)
	}

	// A live member: the plan says apply will be refused, and it is.
	stop := sync.OnceFunc(e.member())
	defer stop()
	deadline := time.Now().Add(30 * time.Second)
	for p = plan("earliest"); p.GroupState != "Stable" && time.Now().Before(deadline); p = plan("earliest") {
		time.Sleep(200 * time.Millisecond)
	}
	if p.GroupState != "Stable" || p.ApplyRefused == "" {
		t.Fatalf("with a member: state %s, apply_refused %q", p.GroupState, p.ApplyRefused)
	}
	s.call(http.MethodPost, groupAPI+"/apply", `{"plan_id":"`+p.ID+`"}`, http.StatusConflict, &refused)
	if !strings.Contains(refused.Error, "stop its consumers first") {
		t.Errorf("apply with a member: %q", refused.Error)
	}
	if log := s.resets(e); len(log) != 3 || log[0].PlanID != p.ID || log[0].Result != string(offsets.ResultRefused) {
		t.Errorf("audit after the refused apply: %+v", log)
	}
	stop()
	if desc := e.describe(e.g); desc[e.topic+":0"] != "2" || desc[e.topic+":1"] != "1" || desc[e.topic+":2"] != "3" {
		t.Errorf("after the refused apply kafka-consumer-groups --describe says %v, want 2 1 3", desc)
	}
}

// TestServeAndCLIApplyOneAtATime: a serve process and `queuewatch offsets
// apply` processes share one data_dir and apply the same plan at the same
// moment, round after round: never do both commit; the other is refused
// (the lease in the shared audit store) or stale (it came second), and
// both are in the one audit log.
func TestServeAndCLIApplyOneAtATime(t *testing.T) {
	e := newEnv(t, testenv.KafkaVersion)
	bin := queuewatch(t)
	dataDir := t.TempDir()
	config := e.writeConfig(dataDir)
	s := e.serve(bin, config)
	const rounds = 4
	for round := range rounds {
		var p offsets.Plan
		s.call(http.MethodPost, "/api/v1/groups/real/"+e.g+"/offsets/plan", fmt.Sprintf(`{"to":"shift:-1","topics":[%q]}`, e.topic), http.StatusOK, &p)
		planFile := filepath.Join(t.TempDir(), "plan.json")
		if out, err := exec.Command(bin, "offsets", "plan", "--config", config, "--cluster", "real", "--group", e.g,
			"--to", "shift:-1", "--topic", e.topic, "--out", planFile).CombinedOutput(); err != nil {
			t.Fatalf("offsets plan: %v\n%s", err, out)
		}
		var wg sync.WaitGroup
		var cli offsets.Receipt
		var cliErr error
		var cliOut []byte
		var api offsets.Receipt
		var apiStatus int
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			cliOut, cliErr = exec.Command(bin, "offsets", "apply", "--config", config, "--plan", planFile, "--who", "cli-test").Output()
			_ = json.Unmarshal(cliOut, &cli)
		})
		wg.Go(func() {
			<-start
			// The CLI process starts in some milliseconds: meet it there.
			time.Sleep(time.Duration(round*15) * time.Millisecond)
			apiStatus, api = s.apply(e.g, p.ID)
		})
		close(start)
		wg.Wait()
		if cli.Result == "" {
			t.Fatalf("round %d: offsets apply printed no receipt (%v): %s", round, cliErr, cliOut)
		}
		t.Logf("round %d: CLI %s (%s), API %d %s (%s)", round, cli.Result, cli.Error, apiStatus, api.Result, api.Error)
		if cli.Result == offsets.ResultOK && apiStatus == http.StatusOK {
			t.Errorf("round %d: both processes committed the same plan", round)
		}
		if cli.Result != offsets.ResultOK && apiStatus != http.StatusOK {
			t.Errorf("round %d: neither committed: CLI %s %s, API %d", round, cli.Result, cli.Error, apiStatus)
		}
		for _, other := range []offsets.Result{cli.Result, api.Result} {
			if other != "" && other != offsets.ResultOK && other != offsets.ResultStale && other != offsets.ResultRefused {
				t.Errorf("round %d: result %s", round, other)
			}
		}
	}
	log := s.resets(e)
	var ok int
	for _, r := range log {
		if r.Result == "ok" {
			ok++
		}
	}
	if len(log) != 2*rounds || ok != rounds {
		t.Errorf("audit log: %d entries, %d ok; want %d and %d: %+v", len(log), ok, 2*rounds, rounds, log)
	}
	// Each round moved the group back one record, once.
	if desc := e.describe(e.g); desc[e.topic+":1"] != fmt.Sprint(5-rounds) {
		t.Errorf("kafka-consumer-groups --describe: %v, want partition 1 at %d", desc, 5-rounds)
	}
}

// apply POSTs apply of group's planID and returns the status and, when
// 200, the receipt (a refusal's is in the audit log). It may run beside
// the test's goroutine, so it reports rather than fails.
func (s *server) apply(group, planID string) (int, offsets.Receipt) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/api/v1/groups/real/"+group+"/offsets/apply",
		strings.NewReader(`{"plan_id":"`+planID+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Error(err)
		return 0, offsets.Receipt{}
	}
	defer func() { _ = resp.Body.Close() }()
	var r offsets.Receipt
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			s.t.Error(err)
		}
	}
	return resp.StatusCode, r
}
