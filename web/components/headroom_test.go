package components

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// TestHeadroomFact: the reader pages' facts show a known headroom, with
// its sentence on hover, and nothing when there is none.
func TestHeadroomFact(t *testing.T) {
	for _, tc := range []struct {
		h           queue.Headroom
		text, hover string
	}{
		{queue.AgeHeadroom(time.Hour, 20*time.Minute, "retention.ms"), ">40m<", "oldest pending record is deleted in 40m (retention.ms 1h)"},
		{queue.ProjectedHeadroom(3000, 1, "retention.bytes 1 GiB"), ">≈ 50m<", "at this rate (retention.bytes 1 GiB)"},
	} {
		var b strings.Builder
		if err := headroomFact(tc.h, "record").Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); !strings.Contains(got, tc.text) || !strings.Contains(got, tc.hover) {
			t.Errorf("%+v renders %s; want %q with %q on hover", tc.h, got, tc.text, tc.hover)
		}
	}
	var b strings.Builder
	if err := headroomFact(queue.Headroom{}, "record").Render(context.Background(), &b); err != nil || b.Len() != 0 {
		t.Errorf("an unknown headroom renders %q (%v), want nothing", b.String(), err)
	}
}
