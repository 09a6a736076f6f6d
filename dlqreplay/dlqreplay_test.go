package dlqreplay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

func TestParseID(t *testing.T) {
	tests := []struct {
		id      string
		want    Ref
		wantErr bool
	}{
		{"rabbitmq:main:/:orders.dlq", Ref{Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "orders.dlq"}, false},
		{"kafka:prod::orders.DLT", Ref{Broker: queue.Kafka, Cluster: "prod", VHost: "", Name: "orders.DLT"}, false},
		{"kafka:prod::a:b", Ref{Broker: queue.Kafka, Cluster: "prod", VHost: "", Name: "a:b"}, false},
		{"rabbitmq:main::q", Ref{}, true},
		{"nats:x::q", Ref{Broker: queue.NATS, Cluster: "x", Name: "q"}, false},
		{"nats:x:vh:q", Ref{}, true},
		{"amqp:x::q", Ref{}, true},
		{"kafka:prod:", Ref{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got, err := ParseID(tt.id)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("ParseID = %+v, %v", got, err)
			}
			if err != nil && !errors.Is(err, ErrUnknownDLQ) {
				t.Fatalf("error %v is not ErrUnknownDLQ", err)
			}
			if err == nil && got.ID() != tt.id {
				t.Fatalf("ID() = %q", got.ID())
			}
		})
	}
}

func TestDecodeDeath(t *testing.T) {
	be32 := binary.BigEndian.AppendUint32(nil, 7)
	be64 := binary.BigEndian.AppendUint64(nil, 0x3132) // digits-looking bytes stay binary
	tests := []struct {
		name    string
		headers []queue.Header
		deaths  []queue.Death
		want    queue.DeathInfo
		sig     queue.FailureSignature
	}{
		{
			name: "spring kafka binary ints",
			headers: []queue.Header{
				{Key: "kafka_dlt-original-topic", Value: []byte("orders")},
				{Key: "kafka_dlt-original-partition", Value: be32},
				{Key: "kafka_dlt-original-offset", Value: be64},
				{Key: "kafka_dlt-exception-fqcn", Value: []byte("java.lang.IllegalStateException")},
			},
			want: queue.DeathInfo{
				Framework: "spring-kafka", OriginalTopic: "orders", OriginalPartition: 7,
				OriginalOffset: 0x3132, HasOriginalOffset: true, ExceptionClass: "java.lang.IllegalStateException",
			},
			sig: queue.FailureSignature{Source: "orders", Reason: "exception", ExceptionClass: "java.lang.IllegalStateException"},
		},
		{
			name: "kafka connect decimal strings",
			headers: []queue.Header{
				{Key: "__connect.errors.topic", Value: []byte("payments")},
				{Key: "__connect.errors.partition", Value: []byte("3")},
				{Key: "__connect.errors.offset", Value: []byte("42")},
				{Key: "__connect.errors.stage", Value: []byte("VALUE_CONVERTER")},
				{Key: "__connect.errors.exception.class.name", Value: []byte("org.apache.kafka.connect.errors.DataException")},
			},
			want: queue.DeathInfo{
				Framework: "kafka-connect", OriginalTopic: "payments", OriginalPartition: 3, OriginalOffset: 42,
				HasOriginalOffset: true, Stage: "VALUE_CONVERTER", ExceptionClass: "org.apache.kafka.connect.errors.DataException",
			},
			sig: queue.FailureSignature{Source: "payments", Reason: "value_converter", ExceptionClass: "org.apache.kafka.connect.errors.DataException"},
		},
		{
			name: "smallrye",
			headers: []queue.Header{
				{Key: "dead-letter-topic", Value: []byte("in")},
				{Key: "dead-letter-reason", Value: []byte("boom")},
				{Key: "dead-letter-cause", Value: []byte("java.io.IOException: disk")},
			},
			want: queue.DeathInfo{
				Framework: "smallrye", OriginalTopic: "in", ExceptionMessage: "boom",
				StackTrace: "java.io.IOException: disk", ExceptionClass: "java.io.IOException",
			},
			sig: queue.FailureSignature{Source: "in", Reason: "exception", ExceptionClass: "java.io.IOException"},
		},
		{
			name: "rabbitmq x-death and spring amqp",
			headers: []queue.Header{
				{Key: "x-first-death-queue", Value: []byte("work")},
				{Key: "x-exception-stacktrace", Value: []byte("org.x.Wrapper: a\nCaused by: com.acme.Bad: b\n\tat x")},
			},
			deaths: []queue.Death{{Queue: "retry", Reason: "expired", Count: 2}},
			want: queue.DeathInfo{
				Framework: "spring-amqp", Deaths: []queue.Death{{Queue: "retry", Reason: "expired", Count: 2}},
				FirstQueue: "work", StackTrace: "org.x.Wrapper: a\nCaused by: com.acme.Bad: b\n\tat x", ExceptionClass: "com.acme.Bad",
			},
			sig: queue.FailureSignature{Source: "retry", Reason: "expired", ExceptionClass: "com.acme.Bad"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := queue.DecodeDeath(tt.headers, tt.deaths)
			if got.Framework != tt.want.Framework || got.OriginalTopic != tt.want.OriginalTopic ||
				got.OriginalPartition != tt.want.OriginalPartition || got.OriginalOffset != tt.want.OriginalOffset ||
				got.HasOriginalOffset != tt.want.HasOriginalOffset || got.ExceptionClass != tt.want.ExceptionClass ||
				got.Stage != tt.want.Stage || got.FirstQueue != tt.want.FirstQueue || got.ExceptionMessage != tt.want.ExceptionMessage ||
				!slices.EqualFunc(got.Deaths, tt.want.Deaths, func(a, b queue.Death) bool { return a.Queue == b.Queue && a.Count == b.Count }) {
				t.Fatalf("DecodeDeath = %+v\nwant %+v", got, tt.want)
			}
			if s := got.Signature(); s != tt.sig {
				t.Fatalf("signature = %+v, want %+v", s, tt.sig)
			}
		})
	}
}

func TestSelectionMatch(t *testing.T) {
	at := time.Unix(1000, 0)
	m := queue.Message{
		ID: "a", Timestamp: at, Headers: []queue.Header{{Key: "tenant", Value: []byte("x")}, {Key: "bin", Value: []byte{0xff}}},
		Death: queue.DeathInfo{Deaths: []queue.Death{{Queue: "work", Reason: "rejected"}}},
	}
	tests := []struct {
		name string
		sel  Selection
		want bool
	}{
		{"all", Selection{All: true}, true},
		{"id", Selection{IDs: []string{"b", "a"}}, true},
		{"other id", Selection{IDs: []string{"b"}}, false},
		{"group", Selection{Group: "work|rejected|"}, true},
		{"other group", Selection{Group: "work|expired|"}, false},
		{"header", Selection{Headers: map[string]string{"tenant": "x"}}, true},
		{"binary header by hex", Selection{Headers: map[string]string{"bin": "0xff"}}, true},
		{"missing header", Selection{Headers: map[string]string{"nope": ""}}, false},
		{"since inclusive", Selection{Since: at}, true},
		{"until exclusive", Selection{Until: at}, false},
		{"range", Selection{Since: at.Add(-time.Second), Until: at.Add(time.Second)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sel.Match(&m); got != tt.want {
				t.Fatalf("Match = %v", got)
			}
		})
	}
	if err := (Selection{}).Validate(); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("empty selection: %v", err)
	}
}

func TestBodyView(t *testing.T) {
	tests := []struct {
		body      []byte
		limit     int
		kind      string
		text      string
		truncated bool
	}{
		{[]byte(`{"a":1}`), 0, queue.BodyJSON, "{\n  \"a\": 1\n}", false},
		{[]byte("héllo"), 0, queue.BodyText, "héllo", false},
		{[]byte("héllo"), 2, queue.BodyText, "h\xc3", true},
		{[]byte{0xff, 0x00}, 0, queue.BodyBinary, "00000000  ff 00                                             |..|\n", false},
		{nil, 0, queue.BodyEmpty, "", false},
	}
	for _, tt := range tests {
		m := queue.Message{Body: tt.body}
		kind, text, tr := m.BodyView(tt.limit)
		if kind != tt.kind || text != tt.text || tr != tt.truncated {
			t.Errorf("BodyView(%q, %d) = %s %q %v", tt.body, tt.limit, kind, text, tr)
		}
	}
}

func TestRequestValidation(t *testing.T) {
	bad := []Request{
		{Action: "explode", Selection: Selection{All: true}},
		{Action: ActionMove, Selection: Selection{All: true}},
		{Target: Target{Kind: TargetOriginalExchange}, Selection: Selection{All: true}},
		{Selection: Selection{}},
	}
	for _, r := range bad {
		if err := r.validate(nil); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("validate(%+v) = %v", r, err)
		}
	}
	// The exchange target is a capability the backend declares.
	r := Request{Target: Target{Kind: TargetOriginalExchange}, Selection: Selection{All: true}}
	if err := r.validate([]TargetKind{TargetOriginalExchange}); err != nil {
		t.Errorf("validate(%+v) with exchanges = %v", r, err)
	}
}

// ids are n distinct ids of size bytes each.
func ids(n, size int) []string {
	out := make([]string, n)
	for i := range out {
		id := fmt.Sprintf("%0*d", size, i)
		out[i] = id[len(id)-size:]
	}
	return out
}

func TestSelectionValidate(t *testing.T) {
	tests := []struct {
		name string
		sel  Selection
		ok   bool
	}{
		{"all", Selection{All: true}, true},
		{"ids", Selection{IDs: []string{"a"}}, true},
		{"empty", Selection{}, false},
		{"negative limit", Selection{All: true, Limit: -1}, false},
		{"negative id count", Selection{All: true, IDCount: -1}, false},
		{"an empty id", Selection{IDs: []string{""}}, false},
		{"an empty id among others", Selection{IDs: []string{"a", ""}}, false},
		{"as many ids as allowed", Selection{IDs: ids(MaxSelectionIDs, 8)}, true},
		{"one id too many", Selection{IDs: ids(MaxSelectionIDs+1, 8)}, false},
		{"ids too long", Selection{IDs: ids(100, MaxSelectionIDBytes/100+1)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.sel.Validate()
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrInvalidRequest)) {
				t.Fatalf("Validate(%+v) = %v, want ok=%v", tt.sel, err, tt.ok)
			}
		})
	}
}
