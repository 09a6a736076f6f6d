package sqs

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	brokersqs "github.com/queuewatch/queuewatch/brokers/sqs"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/conformance"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

func TestMain(m *testing.M) {
	// The SDK's default chain reads these; ElasticMQ checks none.
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x",
		"AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_EC2_METADATA_DISABLED": "true",
	} {
		_ = os.Setenv(k, v)
	}
	code := m.Run()
	testenv.StopElasticMQ()
	testenv.StopMoto()
	os.Exit(code)
}

func TestConformance(t *testing.T) {
	conformance.Run(t, newWorld)
}

// world is a source queue whose redrive policy (maxReceiveCount 1) names
// the DLQ, on the package's ElasticMQ, and a second queue for moves.
// Services reach the server through a TCP proxy so a fault can cut them
// off; the world itself talks to the server directly.
type world struct {
	s      testenv.SQSServer
	c      *sdk.Client
	proxy  *toxiproxy.Proxy
	prefix string
	dlq    string
	source string
	other  string
	vis    time.Duration
	saved  map[string][]conformance.Arrival // arrivals taken early
	// throttle, while set, makes the HTTP front of the proxy answer every
	// request the way SQS answers one over the account's rate.
	throttle atomic.Bool
	front    string // the endpoint services use
	cluster  string
	fifo     bool // FIFO queues; a message's group is its tenant
}

func newWorld(t *testing.T) conformance.World { return newQueues(t, testenv.ElasticMQ(t), false) }

// newQueues is a world of standard or FIFO queues on server s.
func newQueues(t *testing.T, s testenv.SQSServer, fifo bool) *world {
	w := &world{s: s, prefix: testenv.Unique("cf"), saved: map[string][]conformance.Arrival{}, cluster: "local", vis: 6 * time.Second, fifo: fifo}
	w.dlq, w.source, w.other = w.prefix+"-dlq", w.prefix+"-src", w.prefix+"-other"
	if fifo {
		w.dlq, w.source, w.other = w.dlq+".fifo", w.source+".fifo", w.other+".fifo"
	}
	w.c = access(t, s.URL()).Client()
	w.create(t, w.dlq, nil)
	w.create(t, w.source, w.redrive())
	w.create(t, w.other, nil)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	w.proxy = toxiproxy.NewProxy(srv, "sqs", "127.0.0.1:0", strings.TrimPrefix(s.URL(), "http://"))
	if err := w.proxy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.proxy.Stop)
	w.front = w.throttler(t)
	return w
}

// throttler is an HTTP front to the TCP proxy that, while w.throttle is
// set, answers SQS's throttling error (HTTP 400, RequestThrottled) without
// passing the request on, so nothing is stored.
func (w *world) throttler(t *testing.T) string {
	target, _ := url.Parse("http://" + w.proxy.Listen)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = log.New(io.Discard, "", 0) // a cut is the point
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if w.throttle.Load() {
			rw.Header().Set("Content-Type", "application/x-amz-json-1.0")
			rw.Header().Set("x-amzn-query-error", "RequestThrottled;Sender")
			rw.WriteHeader(http.StatusBadRequest)
			_, _ = rw.Write([]byte(`{"__type":"com.amazonaws.sqs#RequestThrottled","message":"Request is throttled."}`))
			return
		}
		rp.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// access is the account at endpoint.
func access(t *testing.T, endpoint string) *brokersqs.Cluster {
	c, err := brokersqs.New(config.SQS{Name: "local", Region: testenv.ElasticMQRegion, Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (w *world) redrive() map[string]string {
	return map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + w.s.QueueARN(w.dlq) + `","maxReceiveCount":"1"}`}
}

// create creates a queue with the aws CLI (a FIFO one in a FIFO world).
func (w *world) create(t *testing.T, name string, attrs map[string]string) {
	if w.fifo {
		attrs = maps.Clone(attrs)
		if attrs == nil {
			attrs = map[string]string{}
		}
		attrs["FifoQueue"] = "true"
	}
	args := []string{"sqs", "create-queue", "--queue-name", name}
	if len(attrs) > 0 {
		b, _ := json.Marshal(attrs)
		args = append(args, "--attributes", string(b))
	}
	w.s.AWS(t, args...)
}

func (w *world) Service(t *testing.T, maxReplays int) *dlqreplay.Service {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return w.service(t, maxReplays, st, w.front)
}

// ServiceOn reaches the server through a proxy of its own: its crash
// stops that proxy for good, so the service's requests never arrive
// again, and what it held comes back after the visibility timeout.
func (w *world) ServiceOn(t *testing.T, st dlqreplay.Store) (*dlqreplay.Service, func(t *testing.T)) {
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "sqs-crash", "127.0.0.1:0", strings.TrimPrefix(w.s.URL(), "http://"))
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return w.service(t, 0, st, "http://"+p.Listen), func(t *testing.T) { p.Stop() }
}

func (w *world) service(t *testing.T, maxReplays int, st dlqreplay.Store, endpoint string) *dlqreplay.Service {
	be, err := New(Options{Cluster: access(t, endpoint), VisibilityTimeout: w.vis})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := dlqreplay.New(dlqreplay.Options{
		Store: st, Backends: []dlqreplay.Backend{be}, MaxReplays: maxReplays, FlushInterval: 20 * time.Millisecond,
		NativePoll: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc
}

func (w *world) DLQ() string {
	return dlqreplay.Ref{Broker: queue.SQS, Cluster: w.cluster, Name: w.dlq}.ID()
}
func (w *world) Source() string { return w.source }
func (w *world) Other() string  { return w.other }

// DeadLetter sends msgs with boto3 and receives them past the source's
// maxReceiveCount, so that ElasticMQ moves them to the DLQ, in runs of
// one origin. A message with an Origin dies in a queue of its own, which
// is deleted afterwards.
func (w *world) DeadLetter(t *testing.T, msgs ...conformance.Message) {
	w.nothingInFlight(t)
	// Copies a job replayed into the source would die too: take them first.
	w.saved[w.source] = append(w.saved[w.source], w.take(t, w.source)...)
	for len(msgs) > 0 {
		n := 1
		for n < len(msgs) && msgs[n].Origin == msgs[0].Origin {
			n++
		}
		w.deadLetterRun(t, msgs[0].Origin, msgs[:n])
		msgs = msgs[n:]
	}
}

// nothingInFlight waits until no message of the DLQ is in flight. A job
// that a fault stopped while it could not give its messages back (every
// request throttled, the connection cut) leaves them in flight until the
// visibility timeout, as the README says; the messages it sent count as
// arrived, so the case before need not wait for them, but the next job's
// Open would refuse the DLQ as held by another instance.
func (w *world) nothingInFlight(t *testing.T) {
	t.Helper()
	url := aws.String(w.s.QueueURL(w.dlq))
	// 3 visibility timeouts were not always enough under the full suite
	// (see the faults case of conformance.go): wait 15.
	for deadline := time.Now().Add(15 * w.vis); ; time.Sleep(200 * time.Millisecond) {
		out, err := w.c.GetQueueAttributes(context.Background(), &sdk.GetQueueAttributesInput{
			QueueUrl: url, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessagesNotVisible},
		})
		if err != nil {
			t.Fatal(err)
		}
		n := out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)]
		if n == "0" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s messages of the dlq still in flight after %s", n, 15*w.vis)
		}
	}
}

func (w *world) deadLetterRun(t *testing.T, origin string, msgs []conformance.Message) {
	q := w.source
	if origin != "" {
		q = origin + "-" + w.prefix
		w.create(t, q, w.redrive())
	}
	type msg struct {
		Body       string            `json:"body"`
		Attributes map[string]string `json:"attributes"`
		Group      string            `json:"group,omitempty"`
	}
	in := make([]msg, len(msgs))
	for i, m := range msgs {
		in[i] = msg{Body: `{"id":"` + m.ID + `"}`, Attributes: map[string]string{conformance.TestIDHeader: m.ID, "tenant": m.Tenant}}
		if w.fifo {
			in[i].Group = m.Tenant
		}
		if m.Tenant == "" {
			delete(in[i].Attributes, "tenant")
		}
		if m.ReplayCount > 0 {
			in[i].Attributes[queue.HeaderReplayCount] = strconv.Itoa(m.ReplayCount)
		}
	}
	b, _ := json.Marshal(in)
	cmd := exec.CommandContext(t.Context(), "python3", "testdata/dead_letter.py", w.s.URL(), w.s.QueueURL(q), w.s.QueueURL(w.dlq))
	cmd.Env = w.s.AWSEnv()
	cmd.Stdin = strings.NewReader(string(b))
	if out, err := cmd.CombinedOutput(); err != nil {
		testenv.Require(t, "boto3", exec.Command("python3", "-c", "import boto3").Run())
		t.Fatalf("dead_letter.py: %v: %s", err, out)
	}
	if origin != "" {
		w.s.AWS(t, "sqs", "delete-queue", "--queue-url", w.s.QueueURL(q))
	}
}

// inspectVisibility hides the messages the test receives to count them.
// It is long enough for one receiveAll of a few hundred messages, and short
// because a receive whose answer is lost (a dropped connection, retried by
// the SDK) hides its batch unseen for that long: with a minute, a CI run saw
// ten messages "lost" until they came back (conformance's accounted waits
// longer than this).
const inspectVisibility = 10 * time.Second

// receiveAll receives every visible message of queue name, hidden for
// inspectVisibility.
func (w *world) receiveAll(t *testing.T, name string) []types.Message {
	t.Helper()
	var out []types.Message
	for {
		r, err := w.c.ReceiveMessage(context.Background(), &sdk.ReceiveMessageInput{
			QueueUrl: aws.String(w.s.QueueURL(name)), MaxNumberOfMessages: 10, VisibilityTimeout: int32(inspectVisibility / time.Second),
			MessageAttributeNames: []string{"All"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Messages) == 0 {
			return out
		}
		out = append(out, r.Messages...)
	}
}

func attr(m types.Message, k string) string {
	return aws.ToString(m.MessageAttributes[k].StringValue)
}

// InDLQ receives the DLQ and makes it all visible again, in order.
func (w *world) InDLQ(t *testing.T) []string {
	ms := w.receiveAll(t, w.dlq)
	var out, handles []string
	for _, m := range ms {
		out = append(out, attr(m, conformance.TestIDHeader))
		handles = append(handles, aws.ToString(m.ReceiptHandle))
	}
	b := &Backend{c: w.c}
	if err := b.giveBack(context.Background(), w.s.QueueURL(w.dlq), handles); err != nil {
		t.Fatal(err)
	}
	return out
}

func (w *world) Arrived(t *testing.T, name string) []conformance.Arrival {
	out := w.saved[name]
	delete(w.saved, name)
	return append(out, w.take(t, name)...)
}

// take receives and deletes what queue name holds.
func (w *world) take(t *testing.T, name string) []conformance.Arrival {
	var out []conformance.Arrival
	for _, m := range w.receiveAll(t, name) {
		out = append(out, conformance.Arrival{
			ID: attr(m, conformance.TestIDHeader), ReplayCount: attr(m, queue.HeaderReplayCount), ReplayID: attr(m, queue.HeaderReplayID),
		})
		if _, err := w.c.DeleteMessage(context.Background(), &sdk.DeleteMessageInput{
			QueueUrl: aws.String(w.s.QueueURL(name)), ReceiptHandle: m.ReceiptHandle,
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Faults: the connection cut by the proxy, every request throttled, and
// the source queue deleted under the job (its arrivals taken first).
func (w *world) Faults() []conformance.Fault {
	return []conformance.Fault{
		{
			Name:   "connection cut by a TCP proxy",
			Inject: func(t *testing.T) { w.proxy.Stop() },
			Heal: func(t *testing.T) {
				if err := w.proxy.Start(); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			Name:   "throttled",
			Inject: func(t *testing.T) { w.throttle.Store(true) },
			Heal:   func(t *testing.T) { w.throttle.Store(false) },
		},
		{
			// Deleted while the proxy holds the job off, so that what it
			// sent can be counted before it goes.
			Name: "target queue deleted",
			Inject: func(t *testing.T) {
				w.proxy.Stop()
				w.saved[w.source] = append(w.saved[w.source], w.take(t, w.source)...)
				if _, err := w.c.DeleteQueue(context.Background(), &sdk.DeleteQueueInput{QueueUrl: aws.String(w.s.QueueURL(w.source))}); err != nil {
					t.Fatal(err)
				}
				if err := w.proxy.Start(); err != nil {
					t.Fatal(err)
				}
			},
			Heal: func(t *testing.T) { w.create(t, w.source, w.redrive()) },
		},
	}
}
