package collectors

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/queue"
)

func sqsSnapshot() *queue.Snapshot {
	return &queue.Snapshot{
		Broker: queue.SQS, Cluster: "prod-eu", Time: fixedTime,
		SQSQueues: []queue.SQSQueue{
			{Cluster: "prod-eu", Name: "orders", ARN: "arn:aws:sqs:eu-west-1:123456789012:orders", Visible: 12, InFlight: 3, Delayed: 1, DeadLetterQueue: "orders-dlq", MaxReceiveCount: 5, Status: queue.StatusOK},
			{Cluster: "prod-eu", Name: "orders-dlq", ARN: "arn:aws:sqs:eu-west-1:123456789012:orders-dlq", Visible: 4, OldestAge: 3 * time.Hour, OldestAgeBasis: queue.SQSAgeBrowse, DLQ: true, Retention: 4 * time.Hour, Status: queue.StatusOK, StatusReason: queue.DLQReason},
			{Cluster: "prod-eu", Name: "unreadable", Err: "get queue attributes unreadable: AccessDenied"},
		},
		DLQs: []queue.DLQ{{Broker: queue.SQS, Cluster: "prod-eu", Name: "orders-dlq", Sources: []string{"orders"}, Detection: queue.DetectedTopology, Messages: 4}},
		SQS:  &queue.SQSAccount{ReadEvery: 5 * time.Minute, Listed: 3, Requests: []queue.SQSRequests{{Action: "GetQueueAttributes", Count: 3}, {Action: "ListQueues", Count: 1}}},
	}
}

// TestSQSMetricsGolden compares the SQS families and the SQS DLQ for a
// fixed snapshot with a golden file. Regenerate it with
// QUEUEWATCH_UPDATE_GOLDEN=1.
func TestSQSMetricsGolden(t *testing.T) {
	c := New([]Source{
		&scriptedSource{broker: queue.SQS, cluster: "prod-eu", results: []func() (*queue.Snapshot, error){ok(sqsSnapshot())}},
	}, Options{})
	c.PollOnce(context.Background())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	names := []string{descDLQMsgs.name, descHeadroom.name}
	for _, f := range sqsFamilies {
		names = append(names, f.name)
	}
	const golden = "testdata/sqs_metrics.golden"
	if os.Getenv("QUEUEWATCH_UPDATE_GOLDEN") != "" {
		got, err := gatherText(reg, names)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(string(want)), names...); err != nil {
		t.Error(err)
	}
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// TestSQSTextMatchesCollect holds the cached text exposition of the SQS
// families, the request counter's TYPE included, to what Collect produces.
func TestSQSTextMatchesCollect(t *testing.T) {
	snap := sqsSnapshot()
	snap.SQSQueues[0].Name = `quote" back\slash`
	c := New([]Source{
		&scriptedSource{broker: queue.SQS, cluster: "prod-eu", results: []func() (*queue.Snapshot, error){ok(snap)}},
	}, Options{})
	c.PollOnce(context.Background())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	gathered, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*dto.MetricFamily{}
	for _, mf := range gathered {
		want[mf.GetName()] = mf
	}
	rec := httptest.NewRecorder()
	c.Handler(prometheus.NewRegistry()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	if !strings.Contains(body, "# TYPE queuewatch_sqs_api_requests_total counter\n") {
		t.Errorf("the text exposition does not type the request counter as a counter:\n%s", body)
	}
	got := parseText(t, strings.NewReader(body))
	if ws, gs := samples(t, want), samples(t, got); strings.Join(ws, "\n") != strings.Join(gs, "\n") {
		t.Errorf("text exposition differs from Collect:\nwant\n%s\ngot\n%s", strings.Join(ws, "\n"), strings.Join(gs, "\n"))
	}
}

// TestSQSDLQStatusAgreesWithRules: a DLQ that fills with nothing in flight
// between two reads, judged as the scheduler's evaluator judges it (the
// DLQ known from the snapshot's DLQs), is exported ok, not stop: every
// queue the alert rules leave out as a DLQ (it has a
// queuewatch_dlq_messages series of its broker) has no stop or stall
// status series, so Grafana and the rules read what the UI shows. A queue
// that is no DLQ in the same state is stop.
func TestSQSDLQStatusAgreesWithRules(t *testing.T) {
	read := func(at time.Time, grown int64) *queue.Snapshot {
		s := sqsSnapshot()
		s.Time, s.SQS.ReadAt = at, at
		s.SQSQueues[0].InFlight = 0 // orders: nobody receives either
		for i := range s.SQSQueues[:2] {
			q := &s.SQSQueues[i]
			q.DLQ = !s.JudgedAsReader("", q.Name)
			q.Visible += grown
			q.Status, q.StatusReason = "", ""
		}
		return s
	}
	ev := alerts.NewEvaluator(alerts.StatusOptions{})
	ev.Evaluate(read(fixedTime.Add(-5*time.Minute), -1))
	snap := read(fixedTime, 0)
	ev.Evaluate(snap)
	c := New([]Source{
		&scriptedSource{broker: queue.SQS, cluster: "prod-eu", results: []func() (*queue.Snapshot, error){ok(snap)}},
	}, Options{})
	c.PollOnce(context.Background())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	gathered, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	dlqs, status := map[string]bool{}, map[string]string{}
	for _, mf := range gathered {
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			switch mf.GetName() {
			case "queuewatch_dlq_messages":
				if l["broker"] == string(queue.SQS) {
					dlqs[l["dlq"]] = true // the rules' sqsDLQs, relabelled to queue
				}
			case "queuewatch_sqs_queue_status":
				if m.GetGauge().GetValue() == 1 {
					status[l["queue"]] = l["status"]
				}
			}
		}
	}
	if !dlqs["orders-dlq"] || dlqs["orders"] {
		t.Fatalf("DLQ series %v, want orders-dlq alone", dlqs)
	}
	for name := range dlqs {
		if st := status[name]; st != string(queue.StatusOK) {
			t.Errorf("DLQ %s is exported %q; the rules leave it out as a DLQ, want ok", name, st)
		}
	}
	if status["orders"] != string(queue.StatusStop) {
		t.Errorf("orders (no DLQ, growing, nothing in flight) is exported %q, want stop", status["orders"])
	}
}
