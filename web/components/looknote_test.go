package components

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

func TestDLQPageSaysHowManySafeLooksAreLeft(t *testing.T) {
	two, zero := 2, 0
	for _, tc := range []struct {
		name string
		d    DLQData
		want string
	}{
		{"unlimited", DLQData{}, ""},
		{"two left", DLQData{SafeBrowsesLeft: &two}, "2 more safe looks"},
		{"last", DLQData{SafeBrowsesLeft: &zero}, "0 more safe looks"},
		{"cached", DLQData{SafeBrowsesLeft: &zero, CachedAt: time.Unix(1_700_000_000, 0)}, "as read at "},
		{"sqs", DLQData{Broker: "sqs", Messages: []MessageView{{M: &queue.Message{ID: "m"}}}}, "each look receives these messages (their receive count rises) and puts them at the back of the queue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := messageList(tc.d).Render(context.Background(), &b); err != nil {
				t.Fatal(err)
			}
			got := tc.d.LookNote()
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("note = %q, want %q", got, tc.want)
			}
			if tc.want != "" && !strings.Contains(b.String(), tc.want) {
				t.Errorf("message list does not show %q", tc.want)
			}
		})
	}
}

// TestDeathsSayQueuewatchsOwnReceives: an SQS death's receive count names
// how many receives were queuewatch's own browses.
func TestDeathsSayQueuewatchsOwnReceives(t *testing.T) {
	if got := receivesText(queue.Death{Count: 5, Own: 2}); got != "×5 · 2 of them queuewatch's own" {
		t.Errorf("receives = %q", got)
	}
	if got := receivesText(queue.Death{Count: 3}); got != "×3" {
		t.Errorf("receives = %q", got)
	}
}
