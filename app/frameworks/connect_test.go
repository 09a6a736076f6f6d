package frameworks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestKafkaConnectDeadLetters runs Kafka Connect 4.4 in standalone mode
// with a sink that discards what it gets, the JSON converter and errors.tolerance=all, fed
// records of which some are not JSON: the worker writes them to its dead
// letter queue with the __connect.errors.* context headers. queuewatch must
// list the DLQ with its source topic and decode every one of those
// headers as Connect wrote them.
func TestKafkaConnectDeadLetters(t *testing.T) {
	t.Parallel()
	testenv.Slow(t, "a Kafka Connect worker on the real broker")
	fw := testenv.RealFramework(t, "kafka-connect")
	k := realKafka(t)
	topic := testenv.Unique("payments")
	dlqTopic, connector := topic+"-dlq", testenv.Unique("file-sink")
	k.createTopic(t, topic, 2)

	var recs []*kgo.Record
	failed := map[string]*kgo.Record{}
	for i := range 8 {
		v := fmt.Sprintf(`{"amount": %d}`, 100*(i+1))
		if i%3 == 0 {
			v = fmt.Sprintf(`{"amount": %d`, i) // cut short: not JSON
		}
		r := &kgo.Record{Topic: topic, Partition: int32(i % 2), Key: fmt.Appendf(nil, "payment-%d", i), Value: []byte(v)}
		recs = append(recs, r)
		if i%3 == 0 {
			failed[string(r.Key)] = r
		}
	}
	k.produce(t, recs...)

	dir := t.TempDir()
	worker := writeProps(t, dir, "worker.properties", map[string]string{
		"bootstrap.servers":              k.node.Addr(),
		"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "false",
		"offset.storage.file.filename":   filepath.Join(dir, "offsets"),
		"offset.flush.interval.ms":       "1000",
		"listeners":                      fmt.Sprintf("http://127.0.0.1:%d", testenv.FreePorts(t, 1)[0]),
		"plugin.discovery":               "only_scan",
	})
	sink := writeProps(t, dir, "sink.properties", map[string]string{
		"name":                              connector,
		"connector.class":                   "io.queuewatch.frameworks.DiscardSinkConnector",
		"tasks.max":                         "1",
		"topics":                            topic,
		"file":                              filepath.Join(dir, "sink.txt"),
		"errors.tolerance":                  "all",
		"errors.deadletterqueue.topic.name": dlqTopic,
		"errors.deadletterqueue.topic.replication.factor": "1",
		"errors.deadletterqueue.context.headers.enable":   "true",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out strings.Builder
	cmd := fw.Command(ctx, "org.apache.kafka.connect.cli.ConnectStandalone", worker, sink)
	cmd.Stdout, cmd.Stderr = &out, &out
	started := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		t.Logf("the worker was stopped: %v", <-exited)
	}
	written := k.readAllOr(t, dlqTopic, len(failed), exited, &out)
	t.Logf("Kafka Connect dead-lettered %d records in %v", len(written), time.Since(started).Round(time.Millisecond))
	stop()

	cfg := baseConfig(t)
	cfg.Kafka = []config.Kafka{{Name: "real", Brokers: []string{k.node.Addr()}, Groups: config.Filter{Include: []string{"^connect-" + connector + "$"}}}}
	q := start(t, cfg)
	id := queue.DLQRef{Broker: queue.Kafka, Cluster: "real", Name: dlqTopic}.ID()
	d := q.waitDLQ(t, id, int64(len(failed)))
	if len(d.Sources) != 1 || d.Sources[0] != topic {
		t.Errorf("DLQ %s attributed to %v, want [%s]", dlqTopic, d.Sources, topic)
	}
	msgs := q.messages(t, id)
	if len(msgs) != len(failed) {
		t.Fatalf("browsed %d dead letters, want %d", len(msgs), len(failed))
	}
	for _, w := range written {
		orig := failed[string(w.Key)]
		if orig == nil {
			t.Fatalf("unexpected dead letter %q", w.Key)
		}
		m := byPosition(t, msgs, w.Partition, w.Offset)
		checkConnect(t, m.Failure, w, orig, connector)
		if orig == recs[0] {
			saveGolden(t, "kafka-connect", m.Headers)
		}
	}
	screenshot(t, q, id, "kafka-connect")
	checkPage(t, q, id, connector, "VALUE_CONVERTER", "org.apache.kafka.connect.json.JsonConverter",
		"org.apache.kafka.connect.errors.DataException")
}

// checkConnect compares the API's decoding of one dead letter with the
// headers Connect wrote (w) and with the record that failed (orig).
func checkConnect(t *testing.T, f failure, w, orig *kgo.Record, connector string) {
	t.Helper()
	raw := func(key string) string {
		v, ok := headerOf(w, key)
		if !ok {
			t.Errorf("Connect wrote no %s header", key)
		}
		return string(v)
	}
	for _, c := range []struct{ name, got, want string }{
		{"source", f.Source, orig.Topic},
		{"reason", f.Reason, "value_converter"},
		{"framework", f.Framework, "kafka-connect"},
		{"original topic", f.OriginalTopic, raw("__connect.errors.topic")},
		{"connector", f.Connector, connector},
		{"stage", f.Stage, raw("__connect.errors.stage")},
		{"executing class", f.ExecutingClass, raw("__connect.errors.class.name")},
		{"exception class", f.ExceptionClass, raw("__connect.errors.exception.class.name")},
		{"exception message", f.ExceptionMessage, raw("__connect.errors.exception.message")},
		{"stack trace", f.StackTrace, raw("__connect.errors.exception.stacktrace")},
	} {
		if c.got != c.want {
			t.Errorf("%s of %s: got %q, want %q", c.name, w.Key, c.got, c.want)
		}
	}
	if f.OriginalTopic != orig.Topic || f.Stage != "VALUE_CONVERTER" || f.ExecutingClass != "org.apache.kafka.connect.json.JsonConverter" ||
		f.ExceptionClass != "org.apache.kafka.connect.errors.DataException" {
		t.Errorf("Connect's own account of %s changed: %+v", w.Key, f)
	}
	if f.OriginalPartition == nil || *f.OriginalPartition != orig.Partition {
		t.Errorf("original partition of %s: got %v, want %d", w.Key, f.OriginalPartition, orig.Partition)
	}
	if f.OriginalOffset == nil || *f.OriginalOffset != orig.Offset {
		t.Errorf("original offset of %s: got %v, want %d", w.Key, f.OriginalOffset, orig.Offset)
	}
	if f.TaskID == nil || *f.TaskID != 0 {
		t.Errorf("task id of %s: got %v, want 0", w.Key, f.TaskID)
	}
}

func writeProps(t *testing.T, dir, name string, props map[string]string) string {
	t.Helper()
	var b strings.Builder
	for k, v := range props {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
