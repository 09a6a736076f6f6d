package components

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// TestHeadroomFact: the group page's facts show the headroom, with its
// sentence on hover, and say "—" with why when there is none.
func TestHeadroomFact(t *testing.T) {
	for _, tc := range []struct {
		h           queue.Headroom
		text, hover string
	}{
		{queue.AgeHeadroom(time.Hour, 20*time.Minute, "retention.ms"), ">40m<", "oldest pending record is deleted in 40m (retention.ms 1h)"},
		{queue.ProjectedHeadroom(3000, 1, "retention.bytes 1 GiB"), ">≈ 50m<", "at this rate (retention.bytes 1 GiB)"},
		{queue.Headroom{}, ">—<", "nothing is pending, or its retention never deletes it"},
	} {
		var b strings.Builder
		if err := headroomFact(tc.h, "record").Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); !strings.Contains(got, tc.text) || !strings.Contains(got, tc.hover) {
			t.Errorf("%+v renders %s; want %q with %q on hover", tc.h, got, tc.text, tc.hover)
		}
	}
}
