package dlqreplay_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// pagedBackend browses a DLQ of n messages, every third one expired and
// the rest rejected; After is a position. rotates makes it a backend whose
// Browse moves what it read (SQS).
type pagedBackend struct {
	fakeBackend
	n       int
	rotates bool
	reads   int
}

func (b *pagedBackend) Browse(_ context.Context, _ dlqreplay.Ref, o dlqreplay.BrowseOptions) (dlqreplay.Page, error) {
	b.reads++
	from, _ := strconv.Atoi(o.After)
	var p dlqreplay.Page
	for i := from; i < min(b.n, from+o.Limit); i++ {
		reason := "rejected"
		if i%3 == 2 {
			reason = "expired"
		}
		p.Messages = append(p.Messages, queue.Message{ID: "m" + strconv.Itoa(i), Death: queue.DeathInfo{Deaths: []queue.Death{{Queue: "orders", Reason: reason, Count: 1}}}})
	}
	if from+o.Limit < b.n {
		p.Next = strconv.Itoa(from + o.Limit)
	}
	return p, nil
}

func (b *pagedBackend) BrowseRotates() bool { return b.rotates }

// TestGroupsOverTheHead: asked for, failure groups count the DLQ's first
// messages, bounded, not only the page's; a backend whose Browse moves
// what it read keeps the page's.
func TestGroupsOverTheHead(t *testing.T) {
	count := func(p dlqreplay.Page) map[string]int {
		out := map[string]int{}
		for _, g := range p.Groups {
			out[g.Signature.Reason] = g.Count
		}
		return out
	}
	for _, tc := range []struct {
		name          string
		n, over       int
		after         string
		rotates       bool
		of            int
		head, whole   bool
		expired, read int
	}{
		{"whole dlq", 30, 1000, "", false, 30, true, true, 10, 2},
		{"second page", 30, 1000, "5", false, 30, true, true, 10, 2},
		{"bounded", 3000, 1000, "", false, 1000, true, false, 333, 2},
		{"not asked", 30, 0, "", false, 5, true, false, 1, 1},
		{"page is the whole dlq", 4, 1000, "", false, 4, true, true, 1, 1},
		{"browse moves what it read", 30, 1000, "5", true, 5, false, false, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &pagedBackend{n: tc.n, rotates: tc.rotates}
			svc, _ := newFakeService(t, b)
			p, err := svc.Browse(context.Background(), fakeDLQ, dlqreplay.BrowseOptions{Limit: 5, After: tc.after, GroupOver: tc.over})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Messages) != min(5, tc.n) || p.GroupsOf != tc.of || p.GroupsHead != tc.head || p.GroupsWhole != tc.whole ||
				count(p)["expired"] != tc.expired || b.reads != tc.read {
				t.Fatalf("page of %d: groups of %d (head %v, whole %v) %v after %d reads; want of %d (head %v, whole %v), %d expired, %d reads",
					len(p.Messages), p.GroupsOf, p.GroupsHead, p.GroupsWhole, count(p), b.reads, tc.of, tc.head, tc.whole, tc.expired, tc.read)
			}
		})
	}
}
