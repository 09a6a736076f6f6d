package collectors

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/queuewatch/queuewatch/queue"
)

// rereadSource serves a DLQ at depth until Reread is called, then at 0.
type rereadSource struct {
	mu     sync.Mutex
	depth  int64
	asked  []string
	job    string
	reread bool
}

func (s *rereadSource) Broker() queue.Broker { return queue.SQS }
func (s *rereadSource) Cluster() string      { return "acct" }
func (s *rereadSource) Poll(context.Context) (*queue.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &queue.Snapshot{Broker: queue.SQS, Cluster: "acct", Time: fixedTime, DLQs: []queue.DLQ{
		{Broker: queue.SQS, Cluster: "acct", Name: "orders-dlq", Messages: s.depth},
	}}, nil
}

func (s *rereadSource) Reread(_ context.Context, names []string, job string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked, s.job, s.reread = names, job, true
	s.depth = 0
	return true, nil
}

// TestCollectorReread: Reread reaches the Rereader of the named broker and
// cluster only, and what it read is published at once; a source that is
// no Rereader, or of another cluster, is left alone.
func TestCollectorReread(t *testing.T) {
	sqs := &rereadSource{depth: 5}
	kafka := &scriptedSource{broker: queue.Kafka, cluster: "acct", results: []func() (*queue.Snapshot, error){
		func() (*queue.Snapshot, error) { return kafkaSnapshot(), nil },
	}}
	c := New([]Source{kafka, sqs}, Options{})
	c.PollOnce(t.Context())
	depth := func() int64 {
		for _, snap := range c.Snapshots() {
			if snap.Broker == queue.SQS {
				return snap.DLQs[0].Messages
			}
		}
		return -1
	}
	if err := c.Reread(t.Context(), queue.SQS, "other", []string{"orders-dlq"}, "job-0"); err != nil || sqs.reread {
		t.Fatalf("Reread of another cluster: %v, reached the source: %v", err, sqs.reread)
	}
	if err := c.Reread(t.Context(), queue.Kafka, "acct", []string{"orders.DLT"}, "job-0"); err != nil || kafka.calls.Load() != 1 {
		t.Fatalf("Reread of a source that is no Rereader: %v, polls %d, want none more", err, kafka.calls.Load())
	}
	if err := c.Reread(t.Context(), queue.SQS, "acct", []string{"orders-dlq", "orders"}, "job-1"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sqs.asked, []string{"orders-dlq", "orders"}) || sqs.job != "job-1" {
		t.Errorf("the source was asked for %v after %q", sqs.asked, sqs.job)
	}
	if d := depth(); d != 0 {
		t.Errorf("depth after Reread: %d, want 0 published at once", d)
	}
}
