package frameworks

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestSpringKafkaDeadLetters runs a Spring Kafka 4.1 listener that fails
// for records whose value is not a number; DeadLetterPublishingRecoverer
// publishes them to <topic>-dlt. queuewatch must list the DLT with its
// source topic and decode, for every dead letter, each header Spring
// wrote, compared with the headers as read from the topic and with the
// records the test produced.
func TestSpringKafkaDeadLetters(t *testing.T) {
	t.Parallel()
	testenv.Slow(t, "a Spring Kafka listener on the real broker")
	fw := testenv.RealFramework(t, "spring-kafka")
	k := realKafka(t)
	topic, group := testenv.Unique("orders"), testenv.Unique("billing")
	dlt := topic + "-dlt" // Spring's default: same partition in <topic>-dlt
	k.createTopic(t, topic, 2)
	k.createTopic(t, dlt, 2)

	var recs []*kgo.Record
	for i := range 10 {
		v := fmt.Sprint(100 * (i + 1))
		if i%3 == 0 {
			v = fmt.Sprintf("amount-%d", i)
		}
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % 2), Key: fmt.Appendf(nil, "order-%d", i), Value: []byte(v)})
	}
	k.produce(t, recs...)
	failed := map[string]*kgo.Record{}
	for i, r := range recs {
		if i%3 == 0 {
			failed[string(r.Key)] = r
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	started := time.Now()
	if _, err := fw.Run(ctx, "io.queuewatch.frameworks.SpringKafkaDlt", k.node.Addr(), topic, group, fmt.Sprint(len(recs))); err != nil {
		t.Fatal(err)
	}
	t.Logf("the Spring Kafka listener ran %v", time.Since(started).Round(time.Millisecond))
	written := k.readAll(t, dlt, len(failed))

	cfg := baseConfig(t)
	cfg.Kafka = []config.Kafka{{Name: "real", Brokers: []string{k.node.Addr()}, Groups: config.Filter{Include: []string{"^" + group + "$"}}}}
	q := start(t, cfg)
	id := queue.DLQRef{Broker: queue.Kafka, Cluster: "real", Name: dlt}.ID()
	d := q.waitDLQ(t, id, int64(len(failed)))
	if len(d.Sources) != 1 || d.Sources[0] != topic {
		t.Errorf("DLQ %s attributed to %v, want [%s]", dlt, d.Sources, topic)
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
		checkSpringKafka(t, m.Failure, w, orig, group)
		if orig == recs[0] {
			saveGolden(t, "spring-kafka", m.Headers)
		}
	}
	screenshot(t, q, id, "spring-kafka")
	checkPage(t, q, id, group, "java.lang.IllegalStateException", "java.lang.NumberFormatException",
		"ListenerExecutionFailedException", "Listener failed; order order-0 has no valid amount", "CreateTime")
}

// checkSpringKafka compares the API's decoding of one dead letter with the
// headers Spring wrote (w) and with the record that failed (orig).
func checkSpringKafka(t *testing.T, f failure, w, orig *kgo.Record, group string) {
	t.Helper()
	raw := func(key string) string {
		v, ok := headerOf(w, key)
		if !ok {
			t.Errorf("Spring wrote no %s header", key)
		}
		return string(v)
	}
	want := failure{
		Source:    orig.Topic,
		Reason:    "exception",
		Framework: "spring-kafka",
		// Spring names the listener's exception as the cause of its
		// ListenerExecutionFailedException wrapper.
		ExceptionClass:        raw("kafka_dlt-exception-cause-fqcn"),
		WrapperClass:          raw("kafka_dlt-exception-fqcn"),
		OriginalTimestampType: raw("kafka_dlt-original-timestamp-type"),
		ExceptionMessage:      raw("kafka_dlt-exception-message"),
		StackTrace:            raw("kafka_dlt-exception-stacktrace"),
		OriginalTopic:         orig.Topic,
		ConsumerGroup:         group,
	}
	for _, c := range []struct{ name, got, want string }{
		{"source", f.Source, want.Source},
		{"reason", f.Reason, want.Reason},
		{"framework", f.Framework, want.Framework},
		{"exception class", f.ExceptionClass, want.ExceptionClass},
		{"exception message", f.ExceptionMessage, want.ExceptionMessage},
		{"stack trace", f.StackTrace, want.StackTrace},
		{"original topic", f.OriginalTopic, want.OriginalTopic},
		{"consumer group", f.ConsumerGroup, want.ConsumerGroup},
		{"wrapper class", f.WrapperClass, want.WrapperClass},
		{"cause class", f.CauseClass, "java.lang.NumberFormatException"},
		{"timestamp type", f.OriginalTimestampType, want.OriginalTimestampType},
	} {
		if c.got != c.want {
			t.Errorf("%s of %s: got %q, want %q", c.name, w.Key, c.got, c.want)
		}
	}
	if p, ok := headerOf(w, "kafka_dlt-original-partition"); !ok || int32(binary.BigEndian.Uint32(p)) != orig.Partition {
		t.Errorf("Spring's original partition header %x, the record was on %d", p, orig.Partition)
	}
	if f.OriginalPartition == nil || *f.OriginalPartition != orig.Partition {
		t.Errorf("original partition of %s: got %v, want %d", w.Key, f.OriginalPartition, orig.Partition)
	}
	if f.OriginalOffset == nil || *f.OriginalOffset != orig.Offset {
		t.Errorf("original offset of %s: got %v, want %d", w.Key, f.OriginalOffset, orig.Offset)
	}
	if f.OriginalTimestamp == nil || !f.OriginalTimestamp.Equal(orig.Timestamp.Truncate(time.Millisecond)) {
		t.Errorf("original timestamp of %s: got %v, want %v", w.Key, f.OriginalTimestamp, orig.Timestamp)
	}
	// Spring wraps what the listener threw; the failure is the listener's.
	if f.ExceptionClass != "java.lang.IllegalStateException" ||
		f.WrapperClass != "org.springframework.kafka.listener.ListenerExecutionFailedException" {
		t.Errorf("exception of %s: %s wrapped in %s, want the listener's IllegalStateException in Spring's wrapper",
			w.Key, f.ExceptionClass, f.WrapperClass)
	}
	if !strings.Contains(f.ExceptionMessage, "order "+string(orig.Key)+" has no valid amount") {
		t.Errorf("exception message %q does not carry the listener's", f.ExceptionMessage)
	}
}
