package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
)

// TestOffsetsShareGroup plans a share group's reset with --share-group,
// applies it from the file and finds it in the log as a share group's;
// the specs a share group has no meaning for, and two groups at once, are
// refused.
func TestOffsetsShareGroup(t *testing.T) {
	c, err := kfake.NewCluster(kfake.Ports(testenv.FreePorts(t, 1)...), kfake.SeedTopics(1, "orders"))
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
	at := kadm.Offsets{}
	at.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 15})
	if resp, err := adm.AlterShareGroupOffsets(context.Background(), "workers", at); err != nil || resp.Error() != nil {
		t.Fatal(err, resp.Error())
	}
	path := writeConfig(t, fmt.Sprintf("data_dir: %s\nkafka:\n  - name: prod\n    brokers: [%s]\n", t.TempDir(), c.ListenAddrs()[0]))
	planFile := filepath.Join(t.TempDir(), "plan.json")

	code, out, errOut := runCmd("offsets", "plan", "--config", path, "--cluster", "prod", "--share-group", "workers", "--to", "earliest", "--out", planFile)
	var plan offsets.Plan
	if err := json.Unmarshal([]byte(out), &plan); code != 0 || err != nil {
		t.Fatalf("plan: exit %d %v\nstdout %s\nstderr %s", code, err, out, errOut)
	}
	if plan.Kind != offsets.KindShare || plan.Group != "workers" || plan.Totals.Reprocess != 15 || *plan.Partitions[0].Current != 15 {
		t.Errorf("plan %+v", plan)
	}
	code, out, errOut = runCmd("offsets", "apply", "--config", path, "--plan", planFile, "--who", "alice")
	var r offsets.Receipt
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.Result != offsets.ResultOK {
		t.Fatalf("apply: exit %d %v %+v\nstderr %s", code, err, r, errOut)
	}
	starts, err := adm.DescribeShareGroupOffsets(context.Background(), "workers")
	if err != nil {
		t.Fatal(err)
	}
	if o := starts["workers"].Offsets["orders"][0]; o.StartOffset != 0 {
		t.Errorf("start offset %d after the reset, want 0", o.StartOffset)
	}
	code, out, _ = runCmd("offsets", "log", "--config", path, "--group", "workers")
	var log []struct {
		Result string
		Entry  offsets.Entry
	}
	if err := json.Unmarshal([]byte(out), &log); code != 0 || err != nil || len(log) != 1 || log[0].Result != "ok" || log[0].Entry.Plan.Kind != offsets.KindShare {
		t.Errorf("log: exit %d %v %+v", code, err, log)
	}

	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--share-group", "workers", "--to", "shift:-5"}, 1, "a share group can be reset to earliest, latest, timestamp:<RFC 3339> or offset:<N>"},
		{[]string{"--share-group", "workers", "--to", "group:g"}, 1, "not group"},
		{[]string{"--share-group", "workers", "--group", "g", "--to", "earliest"}, 2, "not both"},
		{[]string{"--to", "earliest"}, 2, "--group or --share-group is required"},
	} {
		args := append([]string{"offsets", "plan", "--config", path, "--cluster", "prod"}, tc.args...)
		if code, _, errOut := runCmd(args...); code != tc.code || !strings.Contains(errOut, tc.says) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.says)
		}
	}
}
