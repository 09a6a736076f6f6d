package demo

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestCheckOrder(t *testing.T) {
	tests := []struct {
		name  string
		value string
		class string // empty: the order is processed
	}{
		{"valid", `{"order":100001,"total":19.5,"items":1}`, ""},
		{"truncated", `{"order":100001,"tot`, "com.fasterxml.jackson.core.JsonParseException"},
		{"not json", `order=1`, "com.fasterxml.jackson.core.JsonParseException"},
		{"negative total", `{"order":100001,"total":-19.5}`, "java.lang.IllegalStateException"},
		{"zero total", `{"order":100001,"total":0}`, "java.lang.IllegalStateException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := checkOrder([]byte(tt.value))
			switch {
			case tt.class == "" && f != nil:
				t.Fatalf("valid order rejected: %+v", f)
			case tt.class != "" && f == nil:
				t.Fatal("bad order accepted")
			case f != nil && (f.class != tt.class || f.message == "" || f.stack == ""):
				t.Errorf("failure %+v, want class %s with message and stack", f, tt.class)
			}
		})
	}
}

func TestCheckPayment(t *testing.T) {
	tests := []struct {
		name   string
		value  string
		reject bool
	}{
		{"valid", `{"payment":"pay-0000001","amount":12.5}`, false},
		{"legacy text", `payment=pay-0000001;amount=12.50;method=card`, true},
		{"truncated", `{"payment":"pay`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := checkPayment([]byte(tt.value))
			if (f != nil) != tt.reject {
				t.Fatalf("checkPayment(%q) = %+v, want reject %v", tt.value, f, tt.reject)
			}
			if f != nil && f.class != "org.apache.kafka.connect.errors.DataException" {
				t.Errorf("class %s, want DataException", f.class)
			}
		})
	}
}

func TestPoisonRecordsFailTheirConsumers(t *testing.T) {
	var tr traffic
	for range 200 {
		if f := checkOrder(tr.orderRecord(false).Value); f != nil {
			t.Fatalf("healthy order rejected: %+v", f)
		}
		if checkOrder(tr.orderRecord(true).Value) == nil {
			t.Fatal("poison order accepted")
		}
		if f := checkPayment(tr.paymentRecord(false).Value); f != nil {
			t.Fatalf("healthy payment rejected: %+v", f)
		}
		if checkPayment(tr.paymentRecord(true).Value) == nil {
			t.Fatal("poison payment accepted")
		}
	}
}

func TestSpringDeadLetterEncoding(t *testing.T) {
	ts := time.UnixMilli(1_700_000_000_123)
	orig := &kgo.Record{Topic: TopicOrders, Partition: 5, Offset: 1<<40 + 7, Timestamp: ts, Key: []byte("k"), Value: []byte("v")}
	dl := springDeadLetter(orig, GroupOrdersProcessor, checkOrder([]byte("{")), ts.Add(time.Second))
	h := headerMap(dl)
	tests := []struct {
		key  string
		want []byte
	}{
		{"kafka_dlt-original-topic", []byte(TopicOrders)},
		{"kafka_dlt-original-partition", []byte{0, 0, 0, 5}},
		{"kafka_dlt-original-offset", []byte{0, 0, 1, 0, 0, 0, 0, 7}},
		{"kafka_dlt-original-timestamp", binary.BigEndian.AppendUint64(nil, 1_700_000_000_123)},
		{"kafka_dlt-exception-fqcn", []byte(springWrapper)},
		{"kafka_dlt-exception-cause-fqcn", []byte("com.fasterxml.jackson.core.JsonParseException")},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if string(h[tt.key]) != string(tt.want) {
				t.Errorf("header %s = %v, want %v", tt.key, h[tt.key], tt.want)
			}
		})
	}
	if dl.Topic != TopicOrdersDLT || string(dl.Key) != "k" || string(dl.Value) != "v" {
		t.Errorf("dead letter %s %q=%q, want orders.DLT with original key and value", dl.Topic, dl.Key, dl.Value)
	}
}

func TestRateAtStaysWithinSwing(t *testing.T) {
	for _, tr := range produceRates {
		t.Run(tr.topic, func(t *testing.T) {
			lo, hi := math.Inf(1), math.Inf(-1)
			for s := 0.0; s < ratePeriod.Seconds(); s += 0.5 {
				r := rateAt(tr, s)
				lo, hi = math.Min(lo, r), math.Max(hi, r)
			}
			if lo < tr.rate*(1-rateSwing)-1e-9 || hi > tr.rate*(1+rateSwing)+1e-9 || hi-lo < tr.rate*rateSwing {
				t.Errorf("rate ranges %.1f..%.1f, want a swing within %.1f±%.0f%%", lo, hi, tr.rate, rateSwing*100)
			}
		})
	}
	if events := produceRates[2]; events.topic != TopicEvents || events.rate*(1-rateSwing) <= analyticsRate {
		t.Errorf("analytics-slow (%d/s) must stay below the lowest events rate (%.0f/s)", analyticsRate, events.rate*(1-rateSwing))
	}
}
