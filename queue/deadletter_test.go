package queue

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenHeaders reads the headers of a dead letter a real framework wrote,
// recorded by app/frameworks (QUEUEWATCH_UPDATE_GOLDEN=1).
func goldenHeaders(t *testing.T, name string) []Header {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "deadletters", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var hs []Header
	if err := json.Unmarshal(b, &hs); err != nil {
		t.Fatal(err)
	}
	return hs
}

func value(t *testing.T, hs []Header, key string) string {
	t.Helper()
	for _, h := range hs {
		if h.Key == key {
			return string(h.Value)
		}
	}
	t.Fatalf("the golden headers lack %s", key)
	return ""
}

// TestDecodeDeathSpringKafka decodes what Spring Kafka 4.1's
// DeadLetterPublishingRecoverer wrote for a listener that threw an
// IllegalStateException caused by a NumberFormatException: Spring wraps it
// in its ListenerExecutionFailedException and names the listener's
// exception only as the cause. The failure is the listener's exception.
func TestDecodeDeathSpringKafka(t *testing.T) {
	hs := goldenHeaders(t, "spring-kafka")
	d := DecodeDeath(hs, nil)
	want := DeathInfo{
		Framework:             "spring-kafka",
		OriginalTopic:         value(t, hs, "kafka_dlt-original-topic"),
		OriginalPartition:     0,
		OriginalOffset:        0,
		HasOriginalOffset:     true,
		OriginalTimestampType: "CreateTime",
		ConsumerGroup:         value(t, hs, "kafka_dlt-original-consumer-group"),
		ExceptionClass:        "java.lang.IllegalStateException",
		CauseClass:            "java.lang.NumberFormatException",
		WrapperClass:          "org.springframework.kafka.listener.ListenerExecutionFailedException",
		ExceptionMessage:      "Listener failed; order order-0 has no valid amount",
		StackTrace:            value(t, hs, "kafka_dlt-exception-stacktrace"),
	}
	if d.OriginalTimestamp.IsZero() || d.OriginalTimestamp.Year() < 2025 {
		t.Errorf("original timestamp %v", d.OriginalTimestamp)
	}
	want.OriginalTimestamp = d.OriginalTimestamp
	for _, diff := range deathDiff(d, want) {
		t.Error(diff)
	}
	if got := d.Signature().ExceptionClass; got != "java.lang.IllegalStateException" {
		t.Errorf("grouped by %q", got)
	}
}

// TestDecodeDeathSpringAMQP decodes what Spring AMQP 4.1's
// RepublishMessageRecoverer wrote (with includeStackTrace(true); 4.1 omits
// the stack trace by default): no class header, so the class is the
// stack trace's exception whose message Spring recorded.
func TestDecodeDeathSpringAMQP(t *testing.T) {
	hs := goldenHeaders(t, "spring-amqp")
	d := DecodeDeath(hs, nil)
	want := DeathInfo{
		Framework:          "spring-amqp",
		OriginalExchange:   "orders-x",
		OriginalRoutingKey: "orders.created",
		ExceptionClass:     "java.lang.IllegalStateException",
		CauseClass:         "java.lang.NumberFormatException",
		WrapperClass:       "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException",
		ExceptionMessage:   "order m-0 has no valid amount",
		StackTrace:         value(t, hs, "x-exception-stacktrace"),
	}
	for _, diff := range deathDiff(d, want) {
		t.Error(diff)
	}
	if d.Reason() != "exception" {
		t.Errorf("reason %q", d.Reason())
	}
}

// TestDecodeDeathKafkaConnect decodes what a Kafka Connect 4.4 sink
// worker wrote for a record its JSON converter could not read.
func TestDecodeDeathKafkaConnect(t *testing.T) {
	hs := goldenHeaders(t, "kafka-connect")
	d := DecodeDeath(hs, nil)
	want := DeathInfo{
		Framework:         "kafka-connect",
		OriginalTopic:     value(t, hs, "__connect.errors.topic"),
		OriginalPartition: 0,
		OriginalOffset:    0,
		HasOriginalOffset: true,
		Connector:         value(t, hs, "__connect.errors.connector.name"),
		TaskID:            0,
		HasTaskID:         true,
		Stage:             "VALUE_CONVERTER",
		ExecutingClass:    "org.apache.kafka.connect.json.JsonConverter",
		ExceptionClass:    "org.apache.kafka.connect.errors.DataException",
		ExceptionMessage:  value(t, hs, "__connect.errors.exception.message"),
		StackTrace:        value(t, hs, "__connect.errors.exception.stacktrace"),
	}
	if c := exceptionChain(d.StackTrace); len(c) > 1 {
		want.CauseClass = c[1].class
	}
	for _, diff := range deathDiff(d, want) {
		t.Error(diff)
	}
	if d.Reason() != "value_converter" || !strings.HasPrefix(d.Connector, "qw-file-sink-") {
		t.Errorf("reason %q, connector %q", d.Reason(), d.Connector)
	}
}

// deathDiff names each field where got differs from want, with both
// values (stack traces are compared, not printed).
func deathDiff(got, want DeathInfo) []string {
	var out []string
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"Framework", got.Framework, want.Framework},
		{"OriginalTopic", got.OriginalTopic, want.OriginalTopic},
		{"OriginalPartition", got.OriginalPartition, want.OriginalPartition},
		{"OriginalOffset", got.OriginalOffset, want.OriginalOffset},
		{"HasOriginalOffset", got.HasOriginalOffset, want.HasOriginalOffset},
		{"OriginalTimestamp", got.OriginalTimestamp.UnixMilli(), want.OriginalTimestamp.UnixMilli()},
		{"OriginalTimestampType", got.OriginalTimestampType, want.OriginalTimestampType},
		{"ConsumerGroup", got.ConsumerGroup, want.ConsumerGroup},
		{"OriginalExchange", got.OriginalExchange, want.OriginalExchange},
		{"OriginalRoutingKey", got.OriginalRoutingKey, want.OriginalRoutingKey},
		{"Connector", got.Connector, want.Connector},
		{"TaskID", got.TaskID, want.TaskID},
		{"HasTaskID", got.HasTaskID, want.HasTaskID},
		{"Stage", got.Stage, want.Stage},
		{"ExecutingClass", got.ExecutingClass, want.ExecutingClass},
		{"ExceptionClass", got.ExceptionClass, want.ExceptionClass},
		{"CauseClass", got.CauseClass, want.CauseClass},
		{"WrapperClass", got.WrapperClass, want.WrapperClass},
		{"ExceptionMessage", got.ExceptionMessage, want.ExceptionMessage},
		{"StackTrace equal", got.StackTrace == want.StackTrace, true},
		{"Deaths", len(got.Deaths), len(want.Deaths)},
	} {
		if f.got != f.want {
			out = append(out, fmt.Sprintf("%s: got %v, want %v", f.name, f.got, f.want))
		}
	}
	return out
}
