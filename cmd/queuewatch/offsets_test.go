package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
)

// TestOffsetsCommand plans a reset to a file, applies it, and applies it
// again (stale), through the CLI against kfake.
func TestOffsetsCommand(t *testing.T) {
	c, err := kfake.NewCluster(kfake.Ports(testenv.FreePorts(t, 1)...), kfake.SeedTopics(2, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for range 20 {
		cl.Produce(context.Background(), &kgo.Record{Value: []byte("v")}, nil)
	}
	if err := cl.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(context.Background(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.CommitAllOffsets(context.Background(), "g", ends.Offsets()); err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, fmt.Sprintf("data_dir: %s\nkafka:\n  - name: prod\n    brokers: [%s]\n", t.TempDir(), c.ListenAddrs()[0]))
	planFile := filepath.Join(t.TempDir(), "plan.json")

	code, out, errOut := runCmd("offsets", "plan", "--config", path, "--cluster", "prod", "--group", "g", "--to", "earliest", "--out", planFile)
	var plan offsets.Plan
	if err := json.Unmarshal([]byte(out), &plan); code != 0 || err != nil {
		t.Fatalf("plan: exit %d %v\nstdout %s\nstderr %s", code, err, out, errOut)
	}
	if plan.Cluster != "prod" || plan.Group != "g" || plan.Totals.Partitions != 2 || plan.Totals.Reprocess != 20 || plan.ID == "" {
		t.Errorf("plan %+v", plan)
	}
	if saved, _ := os.ReadFile(planFile); string(saved) != out {
		t.Errorf("--out holds %q, stdout %q", saved, out)
	}

	code, out, errOut = runCmd("offsets", "apply", "--config", path, "--plan", planFile, "--who", "alice")
	var r offsets.Receipt
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
		t.Fatalf("apply: exit %d %v\nstdout %s\nstderr %s", code, err, out, errOut)
	}
	if r.Result != offsets.ResultOK || r.Who != "cli:alice" || r.PlanID != plan.ID || len(r.Partitions) != 2 {
		t.Errorf("receipt %+v", r)
	}
	committed, err := adm.FetchOffsets(context.Background(), "g")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range committed.Sorted() {
		if o.At != 0 {
			t.Errorf("%s[%d] committed at %d, want 0", o.Topic, o.Partition, o.At)
		}
	}

	// The same plan again is stale: exit 1, with the reason.
	code, _, errOut = runCmd("offsets", "apply", "--config", path, "--plan", planFile)
	if code != 1 || !strings.Contains(errOut, "plan is stale") || !strings.Contains(errOut, "re-plan") {
		t.Errorf("stale apply: exit %d, stderr %s", code, errOut)
	}

	// Both applies are in the audit log, the refusal too, newest first,
	// with the plan and the receipt.
	code, out, errOut = runCmd("offsets", "log", "--config", path, "--group", "g")
	var log []struct {
		Who, Cluster, Group, Result string
		PlanID                      string `json:"plan_id"`
		Entry                       offsets.Entry
	}
	if err := json.Unmarshal([]byte(out), &log); code != 0 || err != nil {
		t.Fatalf("log: exit %d %v\nstdout %s\nstderr %s", code, err, out, errOut)
	}
	if len(log) != 2 || log[0].Result != "stale" || log[1].Result != "ok" || log[1].Who != "cli:alice" ||
		log[1].PlanID != plan.ID || log[1].Entry.Plan.ID != plan.ID || len(log[1].Entry.Receipt.Partitions) != 2 {
		t.Errorf("audit log of g: %+v", log)
	}
	if code, out, _ = runCmd("offsets", "log", "--config", path, "--group", "other"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("log of a group never reset: exit %d, %s", code, out)
	}
}

func TestOffsetsCommandErrors(t *testing.T) {
	path := writeConfig(t, fmt.Sprintf("data_dir: %s\nkafka:\n  - name: prod\n    brokers: [127.0.0.1:1]\n", t.TempDir()))
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"hello": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"offsets"}, 2, "Usage:"},
		{[]string{"offsets", "reset"}, 2, `unknown subcommand "reset"`},
		{[]string{"offsets", "plan", "--config", path, "--cluster", "prod", "--group", "g"}, 2, "--to is required"},
		{[]string{"offsets", "plan", "--config", path, "--cluster", "prod", "--group", "g", "--to", "yesterday"}, 1, "invalid reset spec"},
		{[]string{"offsets", "plan", "--config", path, "--cluster", "prod", "--group", "g", "--to", "earliest", "--topic", "t:x"}, 1, "not a partition number"},
		{[]string{"offsets", "plan", "--config", path, "--cluster", "nope", "--group", "g", "--to", "earliest"}, 1, `no such cluster "nope"`},
		{[]string{"offsets", "apply", "--config", path}, 2, "--plan is required"},
		{[]string{"offsets", "apply", "--config", path, "--plan", bad}, 1, "not a plan"},
	} {
		code, _, errOut := runCmd(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.says) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args[1:], code, errOut, tc.code, tc.says)
		}
	}
}

// TestPlanTable is the table a terminal shows: a row per partition, the
// totals, the warnings and the refusal.
func TestPlanTable(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	at := time.Date(2026, 12, 5, 9, 4, 0, 0, time.UTC)
	p := offsets.Plan{
		ID: "abc", Cluster: "prod", Group: "g", GroupState: "Stable", Members: []offsets.Member{{ID: "m1"}},
		To: offsets.Spec{Kind: offsets.Shift, N: -4},
		Partitions: []offsets.PartitionPlan{
			{Topic: "orders", Partition: 0, Current: n(5), Target: n(1), Delta: n(-4), Reprocess: 4, LagAfter: 9, TargetTimestamp: &at},
			{Topic: "orders", Partition: 1, LogEnd: 10, LagAfter: 10, Warning: "no committed offset to shift: left as it is"},
		},
		Totals:       offsets.Totals{Partitions: 2, Changed: 1, Reprocess: 4, LagAfter: 19},
		Warnings:     []string{"orders[1]: no committed offset to shift: left as it is"},
		ApplyRefused: "group g is Stable",
	}
	var b strings.Builder
	planTable(&b, p)
	for _, want := range []string{
		"plan abc: group g on prod (Stable, 1 member(s)) to shift:-4",
		"orders          0        5       1  -4           4     0          9  2026-12-05T09:04:00Z",
		"orders          1        -       -   -           0     0         10                     -",
		"1 of 2 partitions change: re-process 4, skip 0, lag after 19",
		"warning: orders[1]: no committed offset to shift",
		"apply will be refused: group g is Stable",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestOffsetsApplyNeedsTheAuditLog: an apply that could not be recorded is
// not made; the error names the data_dir.
func TestOffsetsApplyNeedsTheAuditLog(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, fmt.Sprintf("data_dir: %s\nkafka:\n  - name: prod\n    brokers: [127.0.0.1:1]\n", notADir))
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(planFile, []byte(`{"plan_id":"abc","broker":"kafka","cluster":"prod","group":"g"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCmd("offsets", "apply", "--config", path, "--plan", planFile)
	if code != 1 || !strings.Contains(errOut, "audit store in "+notADir) {
		t.Errorf("apply without an audit log: exit %d, stderr %s", code, errOut)
	}
}
