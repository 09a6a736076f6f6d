package sqs

import (
	"context"
	"slices"
	"testing"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/conformance"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// moto (moto_server) is a second SQS implementation for the redrive and
// FIFO cases; it has no move tasks, so native redrive is not run on it.

// TestFIFOMoto is TestFIFO on moto.
func TestFIFOMoto(t *testing.T) { testFIFO(t, testenv.Moto(t)) }

// TestBrowseFIFOMoto: browsing a FIFO DLQ on moto shows every message of
// every group, with its group id and the queue it died in, and leaves
// them all visible.
func TestBrowseFIFOMoto(t *testing.T) {
	w := newQueues(t, testenv.Moto(t), true)
	w.DeadLetter(t, conformance.Message{ID: "f-0", Tenant: "g1"}, conformance.Message{ID: "f-1", Tenant: "g2"}, conformance.Message{ID: "f-2", Tenant: "g1"})
	p, err := w.Service(t, 0).Browse(context.Background(), w.DLQ(), dlqreplay.BrowseOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range p.Messages {
		id, _ := m.Header(conformance.TestIDHeader)
		got = append(got, string(id))
		if tenant, _ := m.Header("tenant"); m.Properties["MessageGroupId"] != string(tenant) {
			t.Errorf("%s: group %q, want %q", id, m.Properties["MessageGroupId"], tenant)
		}
		if m.Death.Source() != w.source {
			t.Errorf("%s died in %q, want %s", id, m.Death.Source(), w.source)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"f-0", "f-1", "f-2"}) {
		t.Fatalf("browsed %v", got)
	}
	if q, err := w.backend(t).lookup(context.Background(), w.ref()); err != nil || q.count("ApproximateNumberOfMessagesNotVisible") != 0 {
		t.Fatalf("after browsing: %v, %v in flight", err, q)
	}
}
