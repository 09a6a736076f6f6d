package realkafka

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/alerts"
	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	collector "github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestKafkaConnectTaskFailed runs a real Kafka Connect 4.4 worker with two
// sinks on the real broker: one reads JSON and runs, the other's topic
// holds a record that is not JSON and errors.tolerance is none, so its
// task fails on that poison record. queuewatch's poll of the cluster must
// read both in one REST request, and the judged readers must show the
// healthy sink ok and the poisoned one stop with the first line of the
// task's trace, its consumer group and its dead-letter topic.
func TestKafkaConnectTaskFailed(t *testing.T) {
	testenv.Slow(t, "a Kafka Connect worker on the real broker")
	fw := testenv.RealFramework(t, "kafka-connect")
	b := realBroker(t)
	good, poisoned := b.topic(1), b.topic(1)
	b.produceValues(good, `{"amount": 1}`, `{"amount": 2}`)
	b.produceValues(poisoned, `{"amount": 1}`, `{"amount": `)
	healthy, failing := testenv.Unique("healthy-sink"), testenv.Unique("poisoned-sink")

	dir := t.TempDir()
	port := testenv.FreePorts(t, 1)[0]
	worker := writeProps(t, dir, "worker.properties", map[string]string{
		"bootstrap.servers":              b.node.Addr(),
		"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "false",
		"offset.storage.file.filename":   filepath.Join(dir, "offsets"),
		"listeners":                      fmt.Sprintf("http://127.0.0.1:%d", port),
		"plugin.discovery":               "only_scan",
	})
	sink := func(name, topic string, extra map[string]string) string {
		props := map[string]string{"name": name, "connector.class": "io.queuewatch.frameworks.DiscardSinkConnector", "tasks.max": "1", "topics": topic}
		for k, v := range extra {
			props[k] = v
		}
		return writeProps(t, dir, name+".properties", props)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out strings.Builder
	cmd := fw.Command(ctx, "org.apache.kafka.connect.cli.ConnectStandalone", worker,
		sink(healthy, good, nil),
		sink(failing, poisoned, map[string]string{
			"errors.deadletterqueue.topic.name": poisoned + "-dlq", "errors.deadletterqueue.topic.replication.factor": "1",
			"consumer.override.group.id": failing + "-readers",
		}))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	c, err := brokerkafka.New(config.Kafka{
		Name: "real", Brokers: []string{b.node.Addr()},
		Connect: []config.Connect{{Name: "main", URL: fmt.Sprintf("http://127.0.0.1:%d", port)}},
	},
		config.DLQ{KafkaCursorGroup: config.DefaultKafkaCursorGroup})
	if err != nil {
		t.Fatal(err)
	}
	s, err := collector.New(collector.Options{Cluster: c, IncludeGroup: func(g string) bool { return g == failing+"-readers" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ev := alerts.NewEvaluator(alerts.StatusOptions{HysteresisPolls: 1})

	// Wait as an operator would: until the poisoned task has failed.
	var snap *queue.Snapshot
	deadline := time.Now().Add(2 * time.Minute)
	for {
		snap = poll(t, s)
		ev.Evaluate(snap)
		if f, ok := snap.Connector("main", failing); ok && f.TasksIn(queue.ConnectFailed) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the poisoned sink's task never failed; connectors %+v, partial %v; worker log:\n%s", snap.Connectors, snap.Partial, tail(out.String()))
		}
		time.Sleep(500 * time.Millisecond) // the worker starts its connectors in its own time
	}
	if len(snap.Connectors) != 2 {
		t.Fatalf("connectors %+v, want the two sinks", snap.Connectors)
	}
	h, _ := snap.Connector("main", healthy)
	if r := h.Reader(); r.Status != queue.StatusOK || r.Members != 1 || h.Type != "sink" || h.Group != "connect-"+healthy || h.DLQTopic != "" {
		t.Errorf("healthy sink: %+v, reader %s %q", h, r.Status, r.Reason)
	}
	f, _ := snap.Connector("main", failing)
	want := "task 0 failed: org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded in error handler"
	if r := f.Reader(); r.Status != queue.StatusStop || r.Reason != want {
		t.Errorf("poisoned sink: %s %q, want stop %q", r.Status, r.Reason, want)
	}
	// The connector's backlog is its group's lag. The task died before
	// its first offset commit, so the group is Empty with no commit and no
	// partition: its lag reads 0 while a record waits, which is why the
	// connector's own status must say that it stopped.
	if g, ok := snap.Group(failing + "-readers"); !ok || !f.LagKnown || f.Lag != g.TotalLag() {
		t.Errorf("poisoned sink's lag %d (known %v), its group's %+v", f.Lag, f.LagKnown, g)
	} else {
		t.Logf("its group %s: state %s, %d partitions, lag %d", g.Name, g.State, len(g.Partitions), g.TotalLag())
	}
	if h.LagKnown {
		t.Errorf("the healthy sink's group is not watched, yet its lag is known: %d", h.Lag)
	}
	if f.State != queue.ConnectRunning || f.Group != failing+"-readers" || f.DLQTopic != poisoned+"-dlq" || len(f.Topics) != 1 || f.Topics[0] != poisoned {
		t.Errorf("poisoned sink: %+v", f)
	}
	t.Logf("the poisoned sink reads %s", f.Reader().Reason)

	// An operator restarts the failed task: Connect restarts it alone,
	// and it fails again on the same poison record; the healthy sink has
	// nothing to restart.
	connect := c.Connects()[0]
	if r, err := connect.RestartFailed(ctx, failing); err != nil || !r.Restarted || r.Tasks[0] != queue.ConnectRestarting {
		t.Errorf("restart of the poisoned sink: %+v, %v; want task 0 restarting", r, err)
	}
	if r, err := connect.RestartFailed(ctx, healthy); err != nil || r.Restarted || r.Tasks[0] != queue.ConnectRunning {
		t.Errorf("restart of the healthy sink: %+v, %v; want nothing restarted, task 0 running", r, err)
	}
	if _, err := connect.RestartFailed(ctx, "nobody"); !errors.Is(err, brokerkafka.ErrNoConnector) {
		t.Errorf("restart of a connector Connect does not have: %v", err)
	}
	deadline = time.Now().Add(time.Minute)
	for {
		snap = poll(t, s)
		if f, ok := snap.Connector("main", failing); ok && f.TasksIn(queue.ConnectFailed) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restarted task never failed again; connectors %+v; worker log:\n%s", snap.Connectors, tail(out.String()))
		}
		time.Sleep(200 * time.Millisecond) // the worker restarts the task in its own time
	}
	if os.Getenv("QUEUEWATCH_UPDATE_GOLDEN") != "" {
		saveConnectors(t, fmt.Sprintf("http://127.0.0.1:%d", port), map[string]string{healthy: "healthy-sink", failing: "poisoned-sink", good: "payments", poisoned: "orders"})
	}
}

// saveConnectors records the worker's answer to the one request a poll
// makes, for brokers/kafka's parsing tests; replace renames the test's
// unique names to stable ones.
func saveConnectors(t *testing.T, base string, replace map[string]string) {
	t.Helper()
	resp, err := http.Get(base + "/connectors?expand=status&expand=info")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	text := string(body)
	for from, to := range replace {
		text = strings.ReplaceAll(text, from, to)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, []byte(text), "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("../../../brokers/kafka/testdata/connect-connectors.json", append(pretty.Bytes(), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

// produceValues writes one record per value to partition 0 of topic.
func (b *broker) produceValues(topic string, values ...string) {
	b.t.Helper()
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(v)})
	}
	if err := b.cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		b.t.Fatal(err)
	}
}

func writeProps(t *testing.T, dir, name string, props map[string]string) string {
	t.Helper()
	var sb strings.Builder
	for k, v := range props {
		fmt.Fprintf(&sb, "%s=%s\n", k, v)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func tail(s string) string {
	if len(s) > 4000 {
		return s[len(s)-4000:]
	}
	return s
}
