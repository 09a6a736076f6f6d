package queue

import (
	"fmt"
	"strings"
	"testing"
)

func TestDLQSourceBounded(t *testing.T) {
	names := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("orders-service-%04d", i) // 19 bytes
		}
		return out
	}
	for _, tt := range []struct {
		sources []string
		want    string
	}{
		{nil, ""},
		{[]string{"orders"}, "orders"},
		{[]string{"a", "b"}, "a,b"},
		// 12 names are 239 bytes: all fit.
		{names(12), strings.Join(names(12), ",")},
		// 5,000 names: as many as fit beside the suffix, then the count.
		{names(5000), strings.Join(names(12)[:12], ",") + " +4988 more"},
		// One name longer than the bound is kept whole.
		{[]string{strings.Repeat("x", 300), "y"}, strings.Repeat("x", 300) + " +1 more"},
	} {
		d := DLQ{Sources: tt.sources}
		if got := d.Source(); got != tt.want {
			t.Errorf("%d sources: Source() = %q (%d bytes), want %q", len(tt.sources), got, len(got), tt.want)
		}
	}
	if got := (&DLQ{Sources: names(5000)}).Source(); len(got) > maxSourceLabel {
		t.Errorf("5,000 sources: %d bytes, over %d", len(got), maxSourceLabel)
	}
}
