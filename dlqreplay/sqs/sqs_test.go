package sqs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/conformance"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestBrowse: a page shows each message's attributes of every type, its
// system attributes and the queue it died in, pages on with Next, and
// leaves every message visible at once, in order.
func TestBrowse(t *testing.T) {
	w := newWorld(t).(*world)
	w.DeadLetter(t, conformance.Message{ID: "b-0", Tenant: "a"}, conformance.Message{ID: "b-1", Tenant: "b"}, conformance.Message{ID: "b-2", Tenant: "c"})
	// A Number and a Binary attribute, sent straight to the DLQ with the
	// aws CLI (so without DeadLetterQueueSourceArn).
	w.s.AWS(t, "sqs", "send-message", "--queue-url", w.s.QueueURL(w.dlq), "--message-body", "typed", "--message-attributes",
		`{"qw-test-id":{"DataType":"String","StringValue":"b-3"},"n":{"DataType":"Number.int","StringValue":"42"},"bin":{"DataType":"Binary","BinaryValue":"AAEC"}}`)
	svc := w.Service(t, 0)
	var got []string
	after := ""
	for range 3 {
		p, err := svc.Browse(context.Background(), w.DLQ(), dlqreplay.BrowseOptions{Limit: 2, After: after})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range p.Messages {
			id, _ := m.Header(conformance.TestIDHeader)
			got = append(got, string(id))
			if m.Death.Source() != w.source {
				t.Errorf("%s died in %q, want %s", id, m.Death.Source(), w.source)
			}
			for _, k := range []string{"ApproximateReceiveCount", "SentTimestamp", "ApproximateFirstReceiveTimestamp"} {
				if m.Properties[k] == "" {
					t.Errorf("%s lacks property %s: %v", id, k, m.Properties)
				}
			}
			if m.Timestamp.IsZero() {
				t.Errorf("%s has no timestamp", id)
			}
			if string(id) == "b-3" {
				n, _ := m.Header("n")
				bin, _ := m.Header("bin")
				if string(n) != "42" || string(bin) != "AAEC" || m.Properties["DeadLetterQueueSourceArn"] != "" {
					t.Errorf("typed message: n %q, bin %q, properties %v", n, bin, m.Properties)
				}
			} else if !strings.HasSuffix(m.Properties["DeadLetterQueueSourceArn"], ":"+w.source) {
				t.Errorf("%s: DeadLetterQueueSourceArn %q", id, m.Properties["DeadLetterQueueSourceArn"])
			}
		}
		if after = p.Next; after == "" {
			break
		}
	}
	if !slices.Equal(got, []string{"b-0", "b-1", "b-2", "b-3"}) {
		t.Fatalf("browsed %v", got)
	}
	// Nothing is hidden after a browse, and the order is kept.
	if q, err := w.backend(t).lookup(context.Background(), w.ref()); err != nil || q.count("ApproximateNumberOfMessagesNotVisible") != 0 {
		t.Fatalf("after browsing: %v, %v in flight", err, q)
	}
	if in := w.InDLQ(t); !slices.Equal(in, got) {
		t.Fatalf("dlq holds %v after browsing, want %v", in, got)
	}
	// Each browse raised the receive count; the death says how many of
	// the receives were this queuewatch's (two browses), apart from the
	// rest (the redrive's and the test's own look).
	p, err := svc.Browse(context.Background(), w.DLQ(), dlqreplay.BrowseOptions{Limit: 10})
	if err != nil || len(p.Messages) != 4 {
		t.Fatalf("browse again: %d messages, %v", len(p.Messages), err)
	}
	for _, m := range p.Messages {
		d := m.Death.Deaths[0]
		if d.Own != 2 || d.Count < 3 {
			t.Errorf("%s: %d receives, %d of them queuewatch's; want 2 of at least 3", m.ID, d.Count, d.Own)
		}
	}
}

// TestChainedDLQRefused: a DLQ with a redrive policy of its own is
// neither browsed nor opened for a job, and nothing is received from it.
func TestChainedDLQRefused(t *testing.T) {
	w := newWorld(t).(*world)
	w.DeadLetter(t, conformance.Message{ID: "c-0"})
	next := w.prefix + "-dlq2"
	w.create(t, next, nil)
	w.s.AWS(t, "sqs", "set-queue-attributes", "--queue-url", w.s.QueueURL(w.dlq), "--attributes",
		`{"RedrivePolicy":"{\"deadLetterTargetArn\":\"`+w.s.QueueARN(next)+`\",\"maxReceiveCount\":\"3\"}"}`)
	svc := w.Service(t, 0)
	if _, err := svc.Browse(context.Background(), w.DLQ(), dlqreplay.BrowseOptions{Limit: 10}); !errors.Is(err, dlqreplay.ErrDeliveryLimit) || !strings.Contains(err.Error(), "redrive policy of its own") {
		t.Errorf("browse = %v, want ErrDeliveryLimit saying why", err)
	}
	if _, err := svc.Run(context.Background(), dlqreplay.Request{DLQ: w.DLQ(), DryRun: true, Selection: dlqreplay.Selection{All: true}}); !errors.Is(err, dlqreplay.ErrDeliveryLimit) {
		t.Errorf("dry run = %v, want ErrDeliveryLimit", err)
	}
	out := string(w.s.AWS(t, "sqs", "get-queue-attributes", "--queue-url", w.s.QueueURL(w.dlq), "--attribute-names", "All"))
	if !strings.Contains(out, `"ApproximateNumberOfMessages": "1"`) {
		t.Fatalf("the dlq changed: %s", out)
	}
}

// TestTooManyAttributes: a message whose copy would carry more than SQS's
// 10 message attributes fails with that reason and stays in the DLQ,
// while one with room for the two replay stamps moves with all of its own.
func TestTooManyAttributes(t *testing.T) {
	w := newWorld(t).(*world)
	for i, n := range []int{8, 9} {
		attrs := `{"qw-test-id":{"DataType":"String","StringValue":"a-` + strconv.Itoa(i) + `"}`
		for k := 1; k < n; k++ {
			attrs += `,"k` + strconv.Itoa(k) + `":{"DataType":"String","StringValue":"v"}`
		}
		w.s.AWS(t, "sqs", "send-message", "--queue-url", w.s.QueueURL(w.dlq), "--message-body", "x", "--message-attributes", attrs+"}")
	}
	r, err := w.Service(t, 0).Run(context.Background(), dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.Progress.Moved != 1 || r.Job.Progress.Failed != 1 {
		t.Fatalf("receipt %+v", r.Job.Progress)
	}
	for _, o := range r.Outcomes {
		if o.Result == dlqreplay.ResultFailed && !strings.Contains(o.Reason, "SQS allows 10") {
			t.Errorf("failure reason %q", o.Reason)
		}
	}
	if in := w.InDLQ(t); !slices.Equal(in, []string{"a-1"}) {
		t.Fatalf("dlq holds %v, want a-1", in)
	}
	ms := w.receiveAll(t, w.source)
	if len(ms) != 1 || len(ms[0].MessageAttributes) != 10 {
		t.Fatalf("arrived %d copies; want one with 8 attributes and the 2 stamps", len(ms))
	}
}

func (w *world) backend(t *testing.T) *Backend {
	b, err := New(Options{Cluster: access(t, w.s.URL())})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (w *world) ref() dlqreplay.Ref {
	r, _ := dlqreplay.ParseID(w.DLQ())
	return r
}

// TestFIFO: a FIFO DLQ replays into its FIFO source with each message's
// group, in order within each group, with the deduplication id the job
// and message make; a job that keeps a message of a group cannot read the
// group past it and fails saying so, rather than reporting success.
func TestFIFO(t *testing.T) { testFIFO(t, testenv.ElasticMQ(t)) }

func testFIFO(t *testing.T, s testenv.SQSServer) {
	w := newQueues(t, s, true)
	all := []conformance.Message{{ID: "q-0", Tenant: "g1"}, {ID: "q-1", Tenant: "g2"}, {ID: "q-2", Tenant: "g1"}, {ID: "q-3", Tenant: "g1"}, {ID: "q-4", Tenant: "g2"}}
	w.DeadLetter(t, all...)
	r, err := w.Service(t, 0).Run(context.Background(), dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{All: true}})
	if err != nil || r.Job.Progress.Moved != 5 {
		t.Fatalf("replay: %v %+v", err, r.Job)
	}
	byGroup := map[string][]string{}
	for _, m := range w.receiveFIFO(t) {
		g := m.Attributes["MessageGroupId"]
		byGroup[g] = append(byGroup[g], attr(m, conformance.TestIDHeader))
		if want := dedupID(r.Job.ID, ""); len(m.Attributes["MessageDeduplicationId"]) != len(want) || !strings.HasPrefix(m.Attributes["MessageDeduplicationId"], "qw-") {
			t.Errorf("deduplication id %q", m.Attributes["MessageDeduplicationId"])
		}
	}
	if !slices.Equal(byGroup["g1"], []string{"q-0", "q-2", "q-3"}) || !slices.Equal(byGroup["g2"], []string{"q-1", "q-4"}) {
		t.Fatalf("arrived by group %v", byGroup)
	}
	if in := w.InDLQ(t); len(in) != 0 {
		t.Fatalf("dlq holds %v", in)
	}

	// Twelve in one group, the first kept: the first batch of ten moves
	// but for it, and the job stops there saying why.
	var group []conformance.Message
	for i := range 12 {
		group = append(group, conformance.Message{ID: fmt.Sprintf("k-%02d", i), Tenant: "g1"})
	}
	w.DeadLetter(t, group...)
	r, err = w.Service(t, 0).Run(context.Background(), dlqreplay.Request{DLQ: w.DLQ(), Selection: dlqreplay.Selection{Headers: map[string]string{"qw-test-id": "k-01"}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.State != dlqreplay.StateFailed || !strings.Contains(r.Job.Error, "FIFO group") || r.Job.Progress.Moved != 1 {
		t.Fatalf("job on a held group: %+v", r.Job)
	}
	// Counted, not received: a receive sees ten of a group at most.
	if q, err := w.backend(t).lookup(context.Background(), w.ref()); err != nil || q.count("ApproximateNumberOfMessages") != 11 {
		t.Fatalf("after the job: %v, dlq attributes %v, want the 11 others visible", err, q)
	}
}

// receiveFIFO takes what the FIFO source holds, group by group.
func (w *world) receiveFIFO(t *testing.T) []types.Message {
	var out []types.Message
	for {
		r, err := w.c.ReceiveMessage(context.Background(), &sdk.ReceiveMessageInput{
			QueueUrl: aws.String(w.s.QueueURL(w.source)), MaxNumberOfMessages: 10, VisibilityTimeout: 60,
			MessageAttributeNames: []string{"All"}, MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Messages) == 0 {
			return out
		}
		for _, m := range r.Messages {
			if _, err := w.c.DeleteMessage(context.Background(), &sdk.DeleteMessageInput{QueueUrl: aws.String(w.s.QueueURL(w.source)), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, r.Messages...)
	}
}
