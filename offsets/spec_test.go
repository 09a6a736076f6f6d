package offsets

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestParseSpec(t *testing.T) {
	nine := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want Spec
	}{
		{"earliest", Spec{Kind: Earliest}},
		{"latest", Spec{Kind: Latest}},
		{"timestamp:2026-12-05T09:00:00Z", Spec{Kind: Timestamp, Time: nine}},
		{"shift:-100", Spec{Kind: Shift, N: -100}},
		{"shift:+5", Spec{Kind: Shift, N: 5}},
		{"shift:7", Spec{Kind: Shift, N: 7}},
		{"offset:42", Spec{Kind: Offset, N: 42}},
		{"offset:0", Spec{Kind: Offset, N: 0}},
		{"group:orders-v1", Spec{Kind: Group, Group: "orders-v1"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSpec(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Time.Equal(tc.want.Time) || got.Kind != tc.want.Kind || got.N != tc.want.N || got.Group != tc.want.Group {
				t.Fatalf("ParseSpec(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
			// String reads back as the same spec.
			again, err := ParseSpec(got.String())
			if err != nil || again.String() != got.String() {
				t.Fatalf("round trip of %q: %q, %v", tc.in, again, err)
			}
		})
	}
	for _, bad := range []string{
		"", "newest", "earliest:1", "latest:x", "timestamp:", "timestamp:yesterday", "timestamp:2026-12-05 09:00",
		"shift:", "shift:0", "shift:abc", "offset:-1", "offset:+3", "offset:x", "group:",
	} {
		if _, err := ParseSpec(bad); !errors.Is(err, ErrSpec) {
			t.Errorf("ParseSpec(%q) = %v, want ErrSpec", bad, err)
		}
	}
}

func TestParseTopicScope(t *testing.T) {
	for in, want := range map[string]TopicScope{
		"orders":       {Topic: "orders"},
		"orders:3":     {Topic: "orders", Partitions: []int32{3}},
		"orders:0,2,5": {Topic: "orders", Partitions: []int32{0, 2, 5}},
	} {
		got, err := ParseTopicScope(in)
		if err != nil || got.Topic != want.Topic || !slices.Equal(got.Partitions, want.Partitions) || got.String() != in {
			t.Errorf("ParseTopicScope(%q) = %+v (%q), %v; want %+v", in, got, got.String(), err, want)
		}
	}
	for _, bad := range []string{"", ":1", "orders:", "orders:x", "orders:1,", "orders:-1"} {
		if _, err := ParseTopicScope(bad); err == nil {
			t.Errorf("ParseTopicScope(%q) succeeded", bad)
		}
	}
}
