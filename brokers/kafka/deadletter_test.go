package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestStripDLQSuffix(t *testing.T) {
	for in, want := range map[string]string{
		"orders.DLT": "orders", "payments-dlq": "payments", "a_b_dlq": "a_b", "x.error": "x",
		"billing.parking-lot": "billing", "orders": "", ".dlq": "", "users-deadletter": "users",
		"orders.DLQ": "orders", "orders-dlt": "orders", "orders_errors": "orders", "orders.dead-letters": "orders",
	} {
		if got := StripDLQSuffix(in); got != want {
			t.Errorf("StripDLQSuffix(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOriginalTopic(t *testing.T) {
	for name, tt := range map[string]struct {
		headers []kgo.RecordHeader
		want    string
	}{
		"spring kafka":  {[]kgo.RecordHeader{{Key: "kafka_dlt-original-topic", Value: []byte("orders-v2")}}, "orders-v2"},
		"kafka connect": {[]kgo.RecordHeader{{Key: "__connect.errors.topic", Value: []byte("payments")}}, "payments"},
		"smallrye":      {[]kgo.RecordHeader{{Key: "dead-letter-topic", Value: []byte("in")}}, "in"},
		"other headers": {[]kgo.RecordHeader{{Key: "traceparent", Value: []byte("00-ab")}}, ""},
		"no headers":    {nil, ""},
	} {
		if got := OriginalTopic(tt.headers); got != tt.want {
			t.Errorf("%s: OriginalTopic = %q, want %q", name, got, tt.want)
		}
	}
}
