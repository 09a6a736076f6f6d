package sqs

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/alerts"
	brokersqs "github.com/queuewatch/queuewatch/brokers/sqs"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopElasticMQ()
	testenv.StopMoto()
	os.Exit(code)
}

// account is the access to the test server as config section cfg, with
// dummy credentials in the environment, where the default chain reads
// them.
func account(t *testing.T, s testenv.SQSServer, cfg config.SQS) *brokersqs.Cluster {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	cfg.Name, cfg.Region, cfg.Endpoint = "local", testenv.ElasticMQRegion, s.URL()
	if err := (&config.Config{SQS: []config.SQS{cfg}}).Validate(); err != nil && strings.Contains(err.Error(), "sqs[") {
		t.Fatal(err)
	}
	c, err := brokersqs.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createQueue creates the queue name with attrs using the aws CLI.
func createQueue(t *testing.T, s testenv.SQSServer, name string, attrs map[string]string) {
	t.Helper()
	args := []string{"sqs", "create-queue", "--queue-name", name}
	if len(attrs) > 0 {
		b, err := json.Marshal(attrs)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, "--attributes", string(b))
	}
	s.AWS(t, args...)
}

// redrive is a RedrivePolicy naming dlq; maxReceiveCount is written as
// given (a JSON number or a string).
func redrive(s testenv.SQSServer, dlq, maxReceiveCount string) map[string]string {
	return map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + s.QueueARN(dlq) + `","maxReceiveCount":` + maxReceiveCount + `}`}
}

// deadLetter receives from queue with boto3 until its DLQ holds want.
func deadLetter(t *testing.T, s testenv.SQSServer, queueName, dlq string, want int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "python3", "testdata/dead_letter.py", s.URL(), s.QueueURL(queueName), s.QueueURL(dlq), strconv.Itoa(want))
	cmd.Env = s.AWSEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		testenv.Require(t, "boto3", exec.Command("python3", "-c", "import boto3").Run())
		t.Fatalf("dead_letter.py %s: %v: %s", queueName, err, out)
	}
}

// TestSQSPollElasticMQ builds a standard and a FIFO queue pair with redrive
// policies on a real ElasticMQ with the aws CLI, dead-letters messages
// with boto3 the way a failing consumer does, and reads it back: exact
// counts per state, the DLQs with their sources, the FIFO pair, the
// include/exclude selection, the requests sent, and /metrics.
func TestSQSPollElasticMQ(t *testing.T) {
	s := testenv.ElasticMQ(t)
	p := testenv.Unique("poll")
	orders, ordersDLQ := p+"-orders", p+"-orders-dlq"
	pay, payDLQ := p+"-pay.fifo", p+"-pay-dlq.fifo"
	createQueue(t, s, ordersDLQ, nil)
	createQueue(t, s, orders, redrive(s, ordersDLQ, "2"))
	createQueue(t, s, payDLQ, map[string]string{"FifoQueue": "true"})
	fifo := redrive(s, payDLQ, `"1"`)
	fifo["FifoQueue"], fifo["ContentBasedDeduplication"] = "true", "true"
	createQueue(t, s, pay, fifo)
	createQueue(t, s, p+"-ignored", nil)
	createQueue(t, s, testenv.Unique("elsewhere"), nil)

	for i := range 5 {
		s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(orders), "--message-body", "order "+strconv.Itoa(i))
	}
	for i := range 2 {
		s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(pay), "--message-body", "payment "+strconv.Itoa(i), "--message-group-id", "g1")
	}
	deadLetter(t, s, orders, ordersDLQ, 5)
	deadLetter(t, s, pay, payDLQ, 2)
	// Now one message of each state in orders.
	s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(orders), "--message-body", "in flight")
	s.AWS(t, "sqs", "receive-message", "--queue-url", s.QueueURL(orders), "--visibility-timeout", "300")
	s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(orders), "--message-body", "visible")
	s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(orders), "--message-body", "delayed", "--delay-seconds", "300")

	cfg := config.SQS{Queues: config.SQSQueues{Prefix: p, Exclude: []string{".*-ignored"}}}
	cl := account(t, s, cfg)
	src, err := New(Options{Cluster: cl, Include: cfg.Queues.Match})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := src.Poll(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, q := range snap.SQSQueues {
		names = append(names, q.Name)
		if q.Err != "" {
			t.Errorf("%s: %s", q.Name, q.Err)
		}
	}
	if want := []string{orders, ordersDLQ, payDLQ, pay}; !slices.Equal(names, want) {
		t.Fatalf("queues %q, want %q (the prefix's, less the excluded)", names, want)
	}
	o := snap.SQSQueues[0]
	// ElasticMQ 1.7.1 does not report MessageRetentionPeriod (AWS does):
	// unknown reads as 0.
	if o.Visible != 1 || o.InFlight != 1 || o.Delayed != 1 || o.FIFO || o.DeadLetterQueue != ordersDLQ || o.MaxReceiveCount != 2 ||
		o.VisibilityTimeout != 30*time.Second || o.Retention != 0 || o.ARN != s.QueueARN(orders) || o.URL != s.QueueURL(orders) {
		t.Errorf("orders = %+v", o)
	}
	if q := snap.SQSQueues[1]; q.Visible != 5 || q.InFlight != 0 || q.DeadLetterQueue != "" {
		t.Errorf("orders DLQ = %+v, want the 5 dead letters visible", q)
	}
	if q := snap.SQSQueues[3]; !q.FIFO || q.Messages() != 0 || q.DeadLetterQueue != payDLQ || q.MaxReceiveCount != 1 {
		t.Errorf("FIFO source = %+v, want empty, dead-lettering into %s after 1 receive", q, payDLQ)
	}
	if q := snap.SQSQueues[2]; !q.FIFO || q.Visible != 2 {
		t.Errorf("FIFO DLQ = %+v, want FIFO with 2 dead letters", q)
	}
	want := []queue.DLQ{
		{Broker: queue.SQS, Cluster: "local", Name: ordersDLQ, Sources: []string{orders}, Detection: queue.DetectedTopology, Messages: 5},
		{Broker: queue.SQS, Cluster: "local", Name: payDLQ, Sources: []string{pay}, Detection: queue.DetectedTopology, Messages: 2},
	}
	if !dlqsEqual(snap.DLQs, want) {
		t.Errorf("DLQs %+v, want %+v", snap.DLQs, want)
	}
	if snap.SQS == nil || !slices.Equal(snap.SQS.Requests, []queue.SQSRequests{{Action: "GetQueueAttributes", Count: 4}, {Action: "ListQueues", Count: 1}}) {
		t.Errorf("account = %+v, want 1 ListQueues and 4 GetQueueAttributes", snap.SQS)
	}

	// The same account through the scheduler and /metrics.
	c := collectors.New([]collectors.Source{src}, collectors.Options{})
	c.PollOnce(t.Context())
	rec := httptest.NewRecorder()
	c.Handler(prometheus.NewRegistry()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, line := range []string{
		`queuewatch_sqs_queue_messages{cluster="local",queue="` + orders + `",state="visible"} 1`,
		`queuewatch_sqs_queue_messages{cluster="local",queue="` + orders + `",state="in_flight"} 1`,
		`queuewatch_sqs_queue_messages{cluster="local",queue="` + orders + `",state="delayed"} 1`,
		`queuewatch_sqs_queue_messages{cluster="local",queue="` + ordersDLQ + `",state="visible"} 5`,
		`queuewatch_dlq_messages{broker="sqs",cluster="local",dlq="` + ordersDLQ + `",source="` + orders + `",vhost=""} 5`,
		`queuewatch_dlq_messages{broker="sqs",cluster="local",dlq="` + payDLQ + `",source="` + pay + `",vhost=""} 2`,
		`queuewatch_sqs_api_requests_total{action="GetQueueAttributes",cluster="local"} 8`,
		`queuewatch_sqs_api_requests_total{action="ListQueues",cluster="local"} 2`,
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("/metrics lacks %s", line)
		}
	}
	if strings.Contains(body, p+"-ignored") {
		t.Error("/metrics shows an excluded queue")
	}
}

// TestSQSDLQStaysListed: a DLQ once found stays listed at 0 after it is
// emptied, after its source is deleted (no policy names it any more), and
// after it is deleted itself.
func TestSQSDLQStaysListed(t *testing.T) {
	s := testenv.ElasticMQ(t)
	p := testenv.Unique("stays")
	src, dlq := p+"-src", p+"-dlq"
	createQueue(t, s, dlq, nil)
	createQueue(t, s, src, redrive(s, dlq, "3"))
	s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(dlq), "--message-body", "dead")
	cfg := config.SQS{Queues: config.SQSQueues{Prefix: p}}
	source, err := New(Options{Cluster: account(t, s, cfg), Include: cfg.Queues.Match})
	if err != nil {
		t.Fatal(err)
	}
	depth := func(step string, want int64) {
		t.Helper()
		snap, err := source.Poll(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.DLQs) != 1 || snap.DLQs[0].Name != dlq || snap.DLQs[0].Messages != want || snap.DLQs[0].Err != "" ||
			!slices.Equal(snap.DLQs[0].Sources, []string{src}) {
			t.Fatalf("%s: DLQs %+v, want %s from %s at %d", step, snap.DLQs, dlq, src, want)
		}
	}
	depth("found", 1)
	s.AWS(t, "sqs", "purge-queue", "--queue-url", s.QueueURL(dlq))
	depth("emptied", 0)
	s.AWS(t, "sqs", "delete-queue", "--queue-url", s.QueueURL(src))
	depth("source deleted", 0)
	s.AWS(t, "sqs", "delete-queue", "--queue-url", s.QueueURL(dlq))
	depth("deleted", 0)
}

// TestSQSReadEvery: within Interval a poll serves the last read and sends
// nothing; a read due within half a tick happens.
func TestSQSReadEvery(t *testing.T) {
	s := testenv.ElasticMQ(t)
	p := testenv.Unique("every")
	createQueue(t, s, p+"-a", nil)
	cfg := config.SQS{Queues: config.SQSQueues{Prefix: p}}
	cl := account(t, s, cfg)
	src, err := New(Options{Cluster: cl, Include: cfg.Queues.Match, Interval: 5 * time.Minute, Tick: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	src.now = func() time.Time { return now }
	first, err := src.Poll(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if first.SQS.ReadEvery != 5*time.Minute {
		t.Errorf("ReadEvery %s, want 5m", first.SQS.ReadEvery)
	}
	now = now.Add(4*time.Minute + 50*time.Second)
	again, err := src.Poll(t.Context())
	if err != nil || !again.Time.Equal(first.Time) || cl.Requests()["GetQueueAttributes"] != 1 {
		t.Fatalf("a poll before the read is due: %v, the last read's snapshot %v, requests %v", err, again.Time.Equal(first.Time), cl.Requests())
	}
	now = now.Add(3 * time.Second) // 4m53s: due within half a tick
	next, err := src.Poll(t.Context())
	if err != nil || next.Time.Equal(first.Time) || cl.Requests()["GetQueueAttributes"] != 2 {
		t.Fatalf("a poll when the read is due: %v, a new read %v, requests %v", err, !next.Time.Equal(first.Time), cl.Requests())
	}
}

// TestSQSUnreachable: an endpoint nothing listens on fails the poll with an
// error that names the account and the listing.
func TestSQSUnreachable(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	cl, err := brokersqs.New(config.SQS{Name: "gone", Region: "eu-west-1", Endpoint: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	src, err := New(Options{Cluster: cl})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	snap, err := src.Poll(ctx)
	if err == nil || snap != nil || !strings.Contains(err.Error(), "sqs gone: list queues") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Poll = %v, %v; want the listing's connection error", snap, err)
	}
}

func dlqsEqual(a, b []queue.DLQ) bool {
	return slices.EqualFunc(a, b, func(x, y queue.DLQ) bool {
		return x.Broker == y.Broker && x.Cluster == y.Cluster && x.Name == y.Name && slices.Equal(x.Sources, y.Sources) &&
			x.Detection == y.Detection && x.Messages == y.Messages && x.Err == y.Err
	})
}

// judgedPoll polls src and has ev judge the snapshot, as the collector
// does before it publishes one: statuses are judged in alerts.
func judgedPoll(t *testing.T, src *Source, ev *alerts.Evaluator) *queue.Snapshot {
	t.Helper()
	snap, err := src.Poll(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ev.Evaluate(snap)
	return snap
}

// TestSQSStatusElasticMQ: a queue whose visible backlog grows between two
// reads with nothing in flight reads as "no consumer" (stop); once a
// consumer holds a message it is ok again.
func TestSQSStatusElasticMQ(t *testing.T) {
	s := testenv.ElasticMQ(t)
	p := testenv.Unique("status")
	name := p + "-jobs"
	createQueue(t, s, name, nil)
	cfg := config.SQS{Queues: config.SQSQueues{Prefix: p}}
	src, err := New(Options{Cluster: account(t, s, cfg), Include: cfg.Queues.Match})
	if err != nil {
		t.Fatal(err)
	}
	ev := alerts.NewEvaluator(alerts.StatusOptions{})
	// The sentence is the judgement's, with since when a stop lasted
	// (the onset alerts adds) in its head.
	read := func(step string, want queue.Status, reason string) {
		t.Helper()
		snap := judgedPoll(t, src, ev)
		r := snap.SQSQueues[0].Reader()
		since := regexp.MustCompile(`^no consumer since \d\d:\d\d UTC \(\d+s\): `)
		if r.Status != want || since.ReplaceAllString(r.Reason, "no consumer: ") != reason || r.Backlog != snap.SQSQueues[0].Visible {
			t.Errorf("%s: reader %+v, want %s %q", step, r, want, reason)
		}
	}
	send := func(body string) {
		s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(name), "--message-body", body)
	}
	send("a")
	read("first read", queue.StatusOK, "1 visible, 0 in flight")
	send("b")
	send("c")
	read("growing, nobody receives", queue.StatusStop, "no consumer: 3 visible, up from 1 at the last read, and none in flight")
	s.AWS(t, "sqs", "receive-message", "--queue-url", s.QueueURL(name), "--visibility-timeout", "300")
	send("d")
	read("a consumer holds one", queue.StatusOK, "3 visible, 1 in flight")
}

// TestSQSDLQNotJudgedElasticMQ: a DLQ (the redrive target of another
// queue) whose visible backlog grows between two reads with nothing in
// flight is no "no consumer": it is ok with the DLQ sentence, listed among
// the snapshot's DLQs (the series the alert rules leave DLQs out by),
// while the queue it serves, growing the same way, is stop.
func TestSQSDLQNotJudgedElasticMQ(t *testing.T) {
	s := testenv.ElasticMQ(t)
	p := testenv.Unique("dlqjudged")
	dlq, jobs := p+"-jobs-dlq", p+"-jobs"
	createQueue(t, s, dlq, nil)
	createQueue(t, s, jobs, redrive(s, dlq, "3"))
	cfg := config.SQS{Queues: config.SQSQueues{Prefix: p}}
	src, err := New(Options{Cluster: account(t, s, cfg), Include: cfg.Queues.Match})
	if err != nil {
		t.Fatal(err)
	}
	send := func(name, body string) {
		s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(name), "--message-body", body)
	}
	ev := alerts.NewEvaluator(alerts.StatusOptions{})
	send(dlq, "a")
	send(jobs, "a")
	judgedPoll(t, src, ev)
	send(dlq, "b")
	send(jobs, "b")
	snap := judgedPoll(t, src, ev)
	d, ok := snap.SQSQueue(dlq)
	if !ok || !d.DLQ || d.EffectiveStatus() != queue.StatusOK || d.EffectiveReason() != queue.DLQReason || d.Visible != 2 {
		t.Errorf("DLQ %s: %+v, want a DLQ, ok: %q, 2 visible", dlq, d, queue.DLQReason)
	}
	if snap.JudgedAsReader("", dlq) || len(snap.DLQs) != 1 || snap.DLQs[0].Name != dlq {
		t.Errorf("DLQs %+v, want %s alone, not judged as a reader", snap.DLQs, dlq)
	}
	if q, _ := snap.SQSQueue(jobs); q == nil || q.DLQ || q.EffectiveStatus() != queue.StatusStop {
		t.Errorf("queue %s: %+v, want stop, no DLQ", jobs, q)
	}
}

// TestSQSReread: after a job, a re-read of the queues it touched reads
// only those (one GetQueueAttributes each, no listing) and the next poll
// serves their new counts, the DLQ's depth with them, marked as re-read
// after the job, while the account's read time and interval stay. A name
// that is no watched queue is left out. The next account read judges
// growth against the read before the job: a replay's target that nobody
// consumes from is still "no consumer".
func TestSQSReread(t *testing.T) {
	s := testenv.ElasticMQ(t)
	p := testenv.Unique("reread")
	source, dlq := p+"-orders", p+"-orders-dlq"
	createQueue(t, s, dlq, nil)
	createQueue(t, s, source, redrive(s, dlq, "3"))
	for range 2 {
		s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(dlq), "--message-body", "dead")
	}
	cfg := config.SQS{Queues: config.SQSQueues{Prefix: p}}
	cl := account(t, s, cfg)
	src, err := New(Options{Cluster: cl, Include: cfg.Queues.Match, Interval: 4 * time.Minute, Tick: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	now := t0
	src.now = func() time.Time { return now }
	ev := alerts.NewEvaluator(alerts.StatusOptions{})
	judgedPoll(t, src, ev)
	// What a replay does: the DLQ's messages go back to the source.
	s.AWS(t, "sqs", "purge-queue", "--queue-url", s.QueueURL(dlq))
	for range 2 {
		s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(source), "--message-body", "again")
	}
	before := cl.Requests()
	now = t0.Add(time.Minute)
	ok, err := src.Reread(t.Context(), []string{dlq, source, dlq, "/" + source, "elsewhere"}, "job-1")
	if !ok || err != nil {
		t.Fatalf("Reread = %v, %v", ok, err)
	}
	after := cl.Requests()
	if after["GetQueueAttributes"]-before["GetQueueAttributes"] != 2 || after["ListQueues"] != before["ListQueues"] {
		t.Errorf("requests went from %v to %v, want two GetQueueAttributes more and nothing else", before, after)
	}
	snap := judgedPoll(t, src, ev)
	reread := queue.DepthRead{At: now, Every: 4 * time.Minute, AfterJob: "job-1"}
	sq, _ := snap.SQSQueue(source)
	dq, _ := snap.SQSQueue(dlq)
	if sq.Visible != 2 || sq.Read != reread || sq.Status != queue.StatusOK || dq.Visible != 0 || dq.Read != reread {
		t.Errorf("after the re-read: source %d visible, %+v, %s; dlq %d visible, %+v; want 2, 0, re-read after job-1 and ok",
			sq.Visible, sq.Read, sq.Status, dq.Visible, dq.Read)
	}
	if len(snap.DLQs) != 1 || snap.DLQs[0].Messages != 0 || snap.DLQs[0].Read != reread {
		t.Errorf("DLQs after the re-read: %+v, want %s at 0, re-read after job-1", snap.DLQs, dlq)
	}
	if !snap.Time.Equal(now) || !snap.SQS.ReadAt.Equal(t0) {
		t.Errorf("snapshot time %v and account read %v, want %v and %v", snap.Time, snap.SQS.ReadAt, now, t0)
	}
	now = t0.Add(4 * time.Minute)
	snap = judgedPoll(t, src, ev)
	sq, _ = snap.SQSQueue(source)
	if sq.Read.AfterJob != "" || !sq.Read.At.Equal(now) || sq.Status != queue.StatusStop {
		t.Errorf("the next account read: %+v, %s %q; want read now, and stop (0 → 2 since the read before the job, none in flight)",
			sq.Read, sq.Status, sq.StatusReason)
	}
}
