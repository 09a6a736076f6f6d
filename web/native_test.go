package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	brokersqs "github.com/queuewatch/queuewatch/brokers/sqs"
	"github.com/queuewatch/queuewatch/collectors"
	colsqs "github.com/queuewatch/queuewatch/collectors/sqs"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	dlqsqs "github.com/queuewatch/queuewatch/dlqreplay/sqs"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// sqsStack is the real queuewatch over an ElasticMQ account: an SQS
// collector, the replay service with the SQS backend and its audit store,
// and the web server; one source queue whose redrive policy names its DLQ.
type sqsStack struct {
	s        *testenv.ElasticMQServer
	col      *collectors.Collector
	svc      *dlqreplay.Service
	dlq, src string
	id       string
	base     string
}

func newSQSStack(t *testing.T) *sqsStack {
	t.Helper()
	return newSQSStackEvery(t, 0, nil)
}

// newSQSStackEvery is newSQSStack reading the account every interval (0:
// at every poll), with setup run once the queues exist, before the first
// read. As in app, a finished job has the collector re-read the queues it
// touched.
func newSQSStackEvery(t *testing.T, interval time.Duration, setup func(*sqsStack)) *sqsStack {
	t.Helper()
	// The SDK's default chain reads these; ElasticMQ checks none.
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x",
		"AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
	s := testenv.ElasticMQ(t)
	prefix := testenv.Unique("web")
	st := &sqsStack{s: s, dlq: prefix + "-orders-dlq", src: prefix + "-orders"}
	s.AWS(t, "sqs", "create-queue", "--queue-name", st.dlq)
	s.AWS(t, "sqs", "create-queue", "--queue-name", st.src, "--attributes",
		`{"RedrivePolicy":"{\"deadLetterTargetArn\":\"`+s.QueueARN(st.dlq)+`\",\"maxReceiveCount\":\"1\"}"}`)
	cluster, err := brokersqs.New(config.SQS{Name: "local", Region: testenv.ElasticMQRegion, Endpoint: s.Endpoint, Queues: config.SQSQueues{Prefix: prefix}})
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(st)
	}
	src, err := colsqs.New(colsqs.Options{Cluster: cluster, Interval: interval, Tick: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st.col = collectors.New([]collectors.Source{src}, collectors.Options{Interval: time.Second, Timeout: 5 * time.Second, History: time.Hour})
	var wg sync.WaitGroup
	wg.Go(func() { st.col.Run(ctx) })
	auditStore, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	be, err := dlqsqs.New(dlqsqs.Options{Cluster: cluster})
	if err != nil {
		t.Fatal(err)
	}
	st.svc, err = dlqreplay.New(dlqreplay.Options{
		Store: auditStore, Backends: []dlqreplay.Backend{be}, MaxReplays: 5, FlushInterval: 100 * time.Millisecond, NativePoll: 100 * time.Millisecond,
		Finished: func(ctx context.Context, tt dlqreplay.Touched) {
			if err := st.col.Reread(ctx, tt.Broker, tt.Cluster, tt.Names, tt.Job.ID); err != nil {
				t.Errorf("re-read after %s: %v", tt.Job.ID, err)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		st.svc.Close()
		if err := auditStore.Close(); err != nil {
			t.Error(err)
		}
		src.Close()
	})
	st.id = dlqreplay.Ref{Broker: queue.SQS, Cluster: "local", Name: st.dlq}.ID()
	ts := httptest.NewServer(st.server(config.Auth{Mode: config.AuthNone}))
	t.Cleanup(ts.Close)
	st.base = ts.URL
	return st
}

// server is the web server over the stack.
func (st *sqsStack) server(auth config.Auth) *Server {
	return New(Options{
		Monitor: st.col, Metrics: st.col.Handler(prometheus.NewRegistry()), DLQs: st.svc, ReplayRate: 200, Auth: auth,
	})
}

// deadLetter sends n messages to the source and has ElasticMQ move them
// to the DLQ the way a failing consumer does (boto3 receives past
// maxReceiveCount; the script is dlqreplay/sqs's).
func (st *sqsStack) deadLetter(t *testing.T, n int) {
	t.Helper()
	type msg struct {
		Body       string            `json:"body"`
		Attributes map[string]string `json:"attributes"`
	}
	var in []msg
	for i := range n {
		in = append(in, msg{Body: `{"order":` + strconv.Itoa(8800+i) + `,"total":19.5}`, Attributes: map[string]string{"tenant": "eu"}})
	}
	b, _ := json.Marshal(in)
	cmd := exec.CommandContext(t.Context(), "python3", "../dlqreplay/sqs/testdata/dead_letter.py", st.s.Endpoint, st.s.QueueURL(st.src), st.s.QueueURL(st.dlq))
	cmd.Env = st.s.AWSEnv()
	cmd.Stdin = strings.NewReader(string(b))
	if out, err := cmd.CombinedOutput(); err != nil {
		testenv.Require(t, "boto3", exec.Command("python3", "-c", "import boto3").Run())
		t.Fatalf("dead_letter.py: %v: %s", err, out)
	}
}

// depth is the number of visible messages in queue name.
func (st *sqsStack) depth(t *testing.T, name string) int {
	t.Helper()
	var out struct {
		Attributes map[string]string `json:"Attributes"`
	}
	if err := json.Unmarshal(st.s.AWS(t, "sqs", "get-queue-attributes", "--queue-url", st.s.QueueURL(name), "--attribute-names", "All"), &out); err != nil {
		t.Fatal(err)
	}
	var n int
	_ = json.Unmarshal([]byte(out.Attributes["ApproximateNumberOfMessages"]), &n)
	return n
}

// waitListed waits until the collector lists the DLQ with n messages.
func (st *sqsStack) waitListed(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if d := findSnapDLQ(st.col, st.id); d != nil && d.Messages == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector does not list %s with %d messages", st.id, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func apiJob(t *testing.T, resp *http.Response) dlqreplay.Job {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Job dlqreplay.Job `json:"job"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%d %s: %v", resp.StatusCode, b, err)
	}
	return out.Job
}

// TestAPINativeRedrive: POST …/replay {"mode":"native"} answers 202 with
// a job of mode native that SQS runs; a second is 409 naming it, a cancel
// cancels SQS's task; a selection, a dry run and an unknown mode are 400;
// a native redrive of the rest then moves every message, with no replay
// stamp, and the audit log keeps the mode.
func TestAPINativeRedrive(t *testing.T) {
	st := newSQSStack(t)
	st.deadLetter(t, 12)
	c := newPageClient(st.base, "", "")
	replay := "/api/v1/dlqs/" + url.PathEscape(st.id) + "/replay"

	resp := c.send(t, http.MethodPost, replay, `{"mode":"native","selection":{"all":true},"rate":2}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("native redrive = %d", resp.StatusCode)
	}
	j := apiJob(t, resp)
	if j.Mode != dlqreplay.ModeNative || j.State != dlqreplay.StateRunning || j.Target.Name != st.src {
		t.Fatalf("job %+v", j)
	}
	c.expect(t, http.MethodPost, replay, `{"mode":"native","selection":{"all":true}}`, http.StatusConflict, `"job":"`+j.ID+`"`)
	c.expect(t, http.MethodGet, "/api/v1/replays/"+j.ID+"?outcomes=false", "", http.StatusOK, `"mode":"native"`)
	c.expect(t, http.MethodDelete, "/api/v1/replays/"+j.ID, "", http.StatusAccepted, `"mode":"native"`)
	r, err := st.svc.Wait(context.Background(), j.ID)
	if err != nil || r.Job.State != dlqreplay.StateCancelled {
		t.Fatalf("after cancel: %+v, %v", r.Job, err)
	}

	for _, tt := range []struct{ body, want string }{
		{`{"mode":"native","selection":{"ids":["m-1"]}}`, "every message"},
		{`{"mode":"native","selection":{"all":true},"dry_run":true}`, "no dry run"},
		{`{"mode":"turbo","selection":{"all":true}}`, "want pipeline or native"},
		{`{"mode":"","selection":{"all":true}}`, "want pipeline or native"},
		{`{"mode":"native","selection":{"all":true},"rate":501}`, "at most 500"},
	} {
		c.expect(t, http.MethodPost, replay, tt.body, http.StatusBadRequest, tt.want)
	}

	left := st.depth(t, st.dlq)
	resp = c.send(t, http.MethodPost, replay, `{"mode":"native","selection":{"all":true},"rate":-1}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("second native redrive = %d", resp.StatusCode)
	}
	j = apiJob(t, resp)
	r, err = st.svc.Wait(context.Background(), j.ID)
	if err != nil || r.Job.State != dlqreplay.StateSucceeded || r.Job.Progress.Moved != int64(left) {
		t.Fatalf("native redrive of the %d left: %+v, %v", left, r.Job, err)
	}
	if st.depth(t, st.dlq) != 0 || st.depth(t, st.src) != 12 {
		t.Fatalf("dlq %d, source %d after the redrives", st.depth(t, st.dlq), st.depth(t, st.src))
	}
	c.expect(t, http.MethodGet, "/api/v1/audit?dlq="+url.QueryEscape(st.id), "", http.StatusOK, `"mode":"native"`)
	c.expect(t, http.MethodGet, "/replays?job="+url.QueryEscape(j.ID), "", http.StatusOK, "Native redrive moved")

	// Every answer is the document's.
	a := &apiChecker{t: t, doc: loadOpenAPI(t), seen: map[string][]int{}}
	srv := st.server(config.Auth{Mode: config.AuthNone})
	a.check(srv, http.MethodGet, "/replays/{job}", "/api/v1/replays/"+j.ID, "")
	a.check(srv, http.MethodGet, "/audit", "/api/v1/audit", "")
	a.check(srv, http.MethodPost, "/dlqs/{id}/replay", replay, `{"mode":"native","selection":{"ids":["m-1"]}}`)
	rec := a.check(srv, http.MethodPost, "/dlqs/{id}/replay", replay, `{"mode":"native","selection":{"all":true},"rate":1}`)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("native redrive of the empty dlq = %d %s", rec.Code, rec.Body)
	}
	a.check(srv, http.MethodPost, "/dlqs/{id}/replay", replay, `{"mode":"native","selection":{"all":true}}`)
	var started struct{ Job dlqreplay.Job }
	_ = json.Unmarshal(rec.Body.Bytes(), &started)
	if r, err := st.svc.Wait(context.Background(), started.Job.ID); err != nil || r.Job.State != dlqreplay.StateSucceeded {
		t.Fatalf("native redrive of the empty dlq: %+v, %v", r.Job, err)
	}
}

// TestDLQPageOffersNativeRedrive: the DLQ page of an SQS DLQ offers the
// native redrive to an operator, beside Replay all, with what it does not
// do; a viewer gets neither button nor API, and a RabbitMQ DLQ's page
// has no such button.
func TestDLQPageOffersNativeRedrive(t *testing.T) {
	st := newSQSStack(t)
	st.deadLetter(t, 2)
	st.waitListed(t, 2)
	c := newPageClient(st.base, "", "")
	page := "/dlq/" + url.PathEscape(st.id)
	for _, want := range []string{`data-action="native"`, "Redrive with SQS (native)", "no replay stamp", "no poison guard", "one task per source queue", `id="native"`} {
		c.expect(t, http.MethodGet, page, "", http.StatusOK, want)
	}
	viewer := st.server(authConfig(t, config.AuthBasic))
	rec := send(viewer, http.MethodGet, page, basic("victor", "viewer-pw"))
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `data-action="native"`) || !strings.Contains(rec.Body.String(), st.dlq) {
		t.Errorf("viewer's page: %d, native button shown or page missing", rec.Code)
	}
	r := httptest.NewRequest(http.MethodPost, "/api/v1/dlqs/"+url.PathEscape(st.id)+"/replay", strings.NewReader(`{"mode":"native","selection":{"all":true}}`))
	r.Header.Set("Content-Type", "application/json")
	r.SetBasicAuth("victor", "viewer-pw")
	rec = httptest.NewRecorder()
	viewer.ServeHTTP(rec, r)
	if rec.Code != http.StatusForbidden || st.depth(t, st.dlq) != 2 {
		t.Errorf("viewer's native redrive = %d, dlq depth %d", rec.Code, st.depth(t, st.dlq))
	}
	resp := c.send(t, http.MethodGet, "/dlq/"+url.PathEscape("rabbitmq:main:/:orders.dlq"), "")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(b), `data-action="native"`) {
		t.Error("a DLQ of a broker without native redrive offers it")
	}
}
