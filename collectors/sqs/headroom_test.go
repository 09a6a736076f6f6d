package sqs

import (
	"strconv"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	dlqsqs "github.com/queuewatch/queuewatch/dlqreplay/sqs"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestSQSHeadroomMoto: on moto, which reports MessageRetentionPeriod, a
// standard queue's DLQ whose oldest message a browse dated has a headroom of the
// retention the server reports less that age; before the browse it has
// none (no age). ElasticMQ 1.7.1 does not report the retention, so its
// queues have no headroom: unknown is not made up.
func TestSQSHeadroomMoto(t *testing.T) {
	for _, s := range []testenv.SQSServer{testenv.Moto(t), testenv.ElasticMQ(t)} {
		p := testenv.Unique("room")
		// Only a DLQ can be browsed: orders is the DLQ of a source queue,
		// a standard one, so its headroom counts from the original enqueue.
		orders := p + "-orders-dlq"
		createQueue(t, s, orders, map[string]string{"MessageRetentionPeriod": "600"})
		createQueue(t, s, p+"-orders", redrive(s, orders, "3"))
		s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(orders), "--message-body", "first")
		cl := account(t, s, config.SQS{Queues: config.SQSQueues{Prefix: p}})
		poller, err := New(Options{Cluster: cl})
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		if h := pollQueue(ctx, t, poller, orders).RetentionHeadroom(); h.Known {
			t.Errorf("%T before a browse: headroom %+v; want none (no oldest age)", s, h)
		}
		backend, err := dlqsqs.New(dlqsqs.Options{Cluster: cl})
		if err != nil {
			t.Fatal(err)
		}
		if page, err := backend.Browse(ctx, dlqreplay.Ref{Broker: queue.SQS, Cluster: cl.Name(), Name: orders}, dlqreplay.BrowseOptions{Limit: 1}); err != nil || len(page.Messages) != 1 {
			t.Fatalf("%T browse: %d messages, %v", s, len(page.Messages), err)
		}
		q := pollQueue(ctx, t, poller, orders)
		attrs, err := cl.Attributes(ctx, s.QueueURL(orders))
		if err != nil {
			t.Fatal(err)
		}
		reported, hasRetention := attrs["MessageRetentionPeriod"]
		h := q.RetentionHeadroom()
		if !hasRetention {
			if h.Known {
				t.Errorf("%T reports no retention, yet headroom %+v", s, h)
			}
			continue
		}
		secs, _ := strconv.Atoi(reported)
		want := (time.Duration(secs)*time.Second - q.OldestAge).Seconds()
		if !h.Known || h.Seconds != want || h.Limit != "MessageRetentionPeriod 10m, from the original enqueue" || h.Seconds > 600 || h.Seconds < 540 {
			t.Errorf("%T headroom %+v; want %.1fs: the reported retention %ss less the oldest age %s", s, h, want, reported, q.OldestAge)
		}
	}
}
