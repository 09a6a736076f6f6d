package realkafka

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/app"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/offsets"
)

// server is queuewatch serve (app.Run) over e's node, as cluster "real",
// with its audit store in a data_dir of its own.
type server struct {
	t    *testing.T
	base string
}

func (e *env) serve() *server {
	e.t.Helper()
	cfg := config.Default()
	cfg.DataDir = e.t.TempDir()
	cfg.PollInterval, cfg.PollTimeout = 2*time.Second, 2*time.Second
	cfg.Kafka = []config.Kafka{{Name: "real", Brokers: []string{e.node.Addr()}}}
	if err := cfg.Validate(); err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- app.Run(ctx, app.Options{Config: cfg, Listen: "127.0.0.1:0", Listening: func(a string) { addr <- a }})
	}()
	s := &server{t: e.t}
	select {
	case a := <-addr:
		s.base = "http://" + a
	case err := <-done:
		e.t.Fatalf("serve returned before listening: %v", err)
	case <-time.After(30 * time.Second):
		e.t.Fatal("serve did not start listening")
	}
	e.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				e.t.Errorf("serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			e.t.Error("serve did not return after cancel")
		}
	})
	return s
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
	s := e.serve()
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
