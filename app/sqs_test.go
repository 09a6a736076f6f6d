package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// sqsAccount is a config section for the test ElasticMQ watching the
// queues under prefix, with dummy credentials in the environment.
func sqsAccount(t *testing.T, s *testenv.ElasticMQServer, name, prefix string) config.SQS {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	return config.SQS{Name: name, Region: testenv.ElasticMQRegion, Endpoint: s.Endpoint, Queues: config.SQSQueues{Prefix: prefix}}
}

// sqsPair creates prefix-orders dead-lettering into prefix-orders-dlq
// with the aws CLI and puts n messages in the DLQ.
func sqsPair(t *testing.T, s *testenv.ElasticMQServer, prefix string, n int) (source, dlq string) {
	t.Helper()
	source, dlq = prefix+"-orders", prefix+"-orders-dlq"
	s.AWS(t, "sqs", "create-queue", "--queue-name", dlq)
	s.AWS(t, "sqs", "create-queue", "--queue-name", source, "--attributes",
		`{"RedrivePolicy":"{\"deadLetterTargetArn\":\"`+s.QueueARN(dlq)+`\",\"maxReceiveCount\":\"3\"}"}`)
	for range n {
		s.AWS(t, "sqs", "send-message", "--queue-url", s.QueueURL(dlq), "--message-body", "dead")
	}
	return source, dlq
}

// TestCheckSQS runs check on an account of a real ElasticMQ and on one
// whose endpoint nothing listens on: the first is ok with its queues,
// DLQs and request cost, the second fails with the listing's error, and
// neither affects the other.
func TestCheckSQS(t *testing.T) {
	s := testenv.ElasticMQ(t)
	p := testenv.Unique("check")
	sqsPair(t, s, p, 1)
	cfg := testConfig(t)
	cfg.PollInterval = 15 * time.Second
	cfg.PollTimeout = 10 * time.Second
	cfg.History = time.Hour
	cfg.SQS = []config.SQS{sqsAccount(t, s, "local", p), {Name: "gone", Region: "eu-west-1", Endpoint: "http://127.0.0.1:1"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Check(context.Background(), cfg, &out, nil)
	if err == nil || !strings.Contains(err.Error(), "sqs:gone") || strings.Contains(err.Error(), "sqs:local") {
		t.Errorf("Check = %v, want only sqs:gone to fail", err)
	}
	// Two queues: 1 ListQueues + 2 GetQueueAttributes every 4m, 10,800
	// reads in 30 days.
	for _, want := range []string{
		"ok   sqs:local: 2 queues, 1 DLQ; 3 requests a read every 4m0s: about 32,400 requests, $0.01 a month at $0.40 per million in ",
		"FAIL sqs:gone: sqs gone: list queues: ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCheckSQSCloudWatch: with cloudwatch.oldest_age on, check prints
// what the CloudWatch metrics a read asks for cost a month, beside the SQS
// requests (on moto, which serves both).
func TestCheckSQSCloudWatch(t *testing.T) {
	m := testenv.Moto(t)
	p := testenv.Unique("checkcw")
	m.AWS(t, "sqs", "create-queue", "--queue-name", p+"-orders")
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	cfg := testConfig(t)
	cfg.PollInterval = 15 * time.Second
	cfg.PollTimeout = 10 * time.Second
	cfg.History = time.Hour
	cfg.SQS = []config.SQS{{
		Name: "moto", Region: testenv.ElasticMQRegion, Endpoint: m.URL(), Queues: config.SQSQueues{Prefix: p},
		CloudWatch: config.SQSCloudWatch{OldestAge: true},
	}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Check(context.Background(), cfg, &out, nil); err != nil {
		t.Fatalf("Check = %v:\n%s", err, out.String())
	}
	// One queue every 4m: 10,800 metrics in 30 days, $0.108.
	want := "ok   sqs:moto: 1 queue, 0 DLQs; 2 requests a read every 4m0s: about 21,600 requests, $0.01 a month at $0.40 per million; " +
		"CloudWatch oldest age: 1 metric a read, about 10,800 metrics, $0.11 a month at $0.01 per 1,000"
	if !strings.Contains(out.String(), want) {
		t.Errorf("check output lacks %q:\n%s", want, out.String())
	}
}

// TestSQSDLQBrowseAndReplay serves an SQS account beside one whose
// endpoint nothing listens on (down, the other unaffected): its DLQ is
// listed by /api/v1/dlqs with its depth and in /metrics; browsing it
// through the API shows its messages with their source queue (from the
// topology: they were sent to the DLQ directly) and leaves them there,
// its page renders, and a replay through the API moves them back to the
// source.
func TestSQSDLQBrowseAndReplay(t *testing.T) {
	s := testenv.ElasticMQ(t)
	p := testenv.Unique("serve")
	source, dlq := sqsPair(t, s, p, 2)
	cfg := testConfig(t)
	cfg.SQS = []config.SQS{sqsAccount(t, s, "local", p), {Name: "gone", Region: "eu-west-1", Endpoint: "http://127.0.0.1:1"}}
	r := start(t, cfg)
	id := "sqs:local::" + dlq
	eventually(t, "the SQS DLQ listed", func() bool { n, ok := r.listedDLQ(t, id); return ok && n == 2 })
	eventually(t, "the unreachable account's error", func() bool {
		_, body := r.get(t, "/api/v1/sources")
		return strings.Contains(body, "sqs gone: list queues") && strings.Contains(body, "connection refused")
	})
	_, metrics := r.get(t, "/metrics")
	for _, want := range []string{
		`queuewatch_dlq_messages{broker="sqs",cluster="local",dlq="` + dlq + `",source="` + source + `",vhost=""} 2`,
		`queuewatch_collector_up{broker="sqs",cluster="local"} 1`,
		`queuewatch_collector_up{broker="sqs",cluster="gone"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, path := range []string{"/", "/api/v1/dlqs", "/api/v1/sources", "/replays"} {
		if code, body := r.get(t, path); code != http.StatusOK {
			t.Errorf("GET %s with an SQS account: %d; body %.300q", path, code, body)
		}
	}
	esc := url.PathEscape(id)
	code, body := r.get(t, "/api/v1/dlqs/"+esc+"/messages")
	if code != http.StatusOK || strings.Count(body, `"ApproximateReceiveCount"`) != 2 || !strings.Contains(body, `"queue":"`+source+`"`) {
		t.Errorf("browse: %d, want 2 messages dead in %s; body %.600q", code, source, body)
	}
	if code, body := r.get(t, "/dlq/"+esc); code != http.StatusOK {
		t.Errorf("GET the DLQ page: %d; body %.300q", code, body)
	}
	if n := sqsDepth(t, s, dlq); n != 2 {
		t.Fatalf("the browse left %d messages in the dlq, want 2", n)
	}
	if code := r.post(t, "/api/v1/dlqs/"+esc+"/replay", `{"selection":{"all":true}}`); code != http.StatusAccepted {
		t.Fatalf("POST replay: %d, want 202", code)
	}
	eventually(t, "the replay moved both messages", func() bool { return sqsDepth(t, s, dlq) == 0 && sqsDepth(t, s, source) == 2 })
}

// sqsDepth is the visible messages of queue name, read with the aws CLI.
func sqsDepth(t *testing.T, s *testenv.ElasticMQServer, name string) int {
	t.Helper()
	var out struct{ Attributes map[string]string }
	if err := json.Unmarshal(s.AWS(t, "sqs", "get-queue-attributes", "--queue-url", s.QueueURL(name), "--attribute-names", "ApproximateNumberOfMessages"), &out); err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(out.Attributes["ApproximateNumberOfMessages"])
	return n
}

// TestSQSAccountCannotStart: an account whose access cannot be built (the
// AWS_PROFILE it would read does not exist) is that account's error on
// every poll, in check and in serve, never the process's.
func TestSQSAccountCannotStart(t *testing.T) {
	cfg := testConfig(t)
	cfg.SQS = []config.SQS{{Name: "noprofile", Region: "eu-west-1", Endpoint: "http://127.0.0.1:1"}}
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	t.Setenv("AWS_PROFILE", "qw-missing")
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Check(context.Background(), cfg, &out, nil)
	if err == nil || !strings.Contains(out.String(), "FAIL sqs:noprofile: cannot start: ") || !strings.Contains(out.String(), "qw-missing") {
		t.Errorf("Check = %v, output:\n%s\nwant sqs:noprofile to fail naming the profile", err, out.String())
	}
	r := start(t, cfg)
	eventually(t, "the account's error", func() bool {
		_, body := r.get(t, "/api/v1/sources")
		return strings.Contains(body, "cannot start") && strings.Contains(body, "qw-missing")
	})
}

// TestSQSOldestAgeServed: messages sent to a DLQ with the aws CLI, a
// wait, a browse through the API, and the next read of the account
// dates the queue by the oldest message the browse saw: at least the
// wait, basis browse, in /metrics, the queue API and its page. Emptied,
// the queue's estimate is gone from /metrics.
func TestSQSOldestAgeServed(t *testing.T) {
	s := testenv.ElasticMQ(t)
	p := testenv.Unique("age")
	_, dlq := sqsPair(t, s, p, 2)
	const wait = 2 * time.Second
	time.Sleep(wait)
	cfg := testConfig(t)
	acct := sqsAccount(t, s, "local", p)
	acct.PollInterval = time.Second
	cfg.SQS = []config.SQS{acct}
	r := start(t, cfg)
	id := "sqs:local::" + dlq
	eventually(t, "the SQS DLQ listed", func() bool { n, ok := r.listedDLQ(t, id); return ok && n == 2 })
	if code, body := r.get(t, "/api/v1/dlqs/"+url.PathEscape(id)+"/messages?limit=1"); code != http.StatusOK {
		t.Fatalf("browse: %d %.300q", code, body)
	}
	series := `queuewatch_sqs_queue_oldest_age_seconds{basis="browse",cluster="local",queue="` + dlq + `"} `
	eventually(t, "the browse estimate in /metrics", func() bool {
		_, m := r.get(t, "/metrics")
		return strings.Contains(m, series)
	})
	var list struct {
		Queues []struct {
			Queue  string   `json:"queue"`
			Oldest *float64 `json:"oldest_age_seconds"`
			Basis  string   `json:"oldest_age_basis"`
		} `json:"queues"`
	}
	_, body := r.get(t, "/api/v1/sqs/queues")
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	for _, q := range list.Queues {
		if q.Queue == dlq && (q.Oldest == nil || *q.Oldest < wait.Seconds() || q.Basis != "browse") {
			t.Errorf("%s in the API: oldest %v, basis %q; want at least %v, browse", dlq, q.Oldest, q.Basis, wait)
		}
	}
	if _, page := r.get(t, "/sqs/local/queues/"+url.PathEscape(dlq)); !strings.Contains(page, "(seen while browsing)") {
		t.Error("the queue page does not show the age seen while browsing")
	}
	s.AWS(t, "sqs", "purge-queue", "--queue-url", s.QueueURL(dlq))
	eventually(t, "the estimate forgotten once the queue is empty", func() bool {
		_, m := r.get(t, "/metrics")
		return !strings.Contains(m, series)
	})
}

// TestSQSDepthAfterReplay: on an account read every 4 minutes, a replay
// of a DLQ of 3 messages shows in /metrics soon after the job ended — the
// DLQ at 0, its source at 3 — rather than at the next read, from a re-read
// of the two queues the job touched (two GetQueueAttributes, no listing),
// and the queue page says the counts were re-read after that job.
func TestSQSDepthAfterReplay(t *testing.T) {
	s := testenv.ElasticMQ(t)
	p := testenv.Unique("reread")
	const n = 3
	source, dlq := sqsPair(t, s, p, n)
	cfg := testConfig(t)
	acct := sqsAccount(t, s, "local", p)
	acct.PollInterval = 4 * time.Minute
	cfg.SQS = []config.SQS{acct}
	r := start(t, cfg)
	id := "sqs:local::" + dlq
	eventually(t, "the SQS DLQ listed", func() bool { n, ok := r.listedDLQ(t, id); return ok && n == 3 })
	_, before := r.get(t, "/metrics")
	lists := sqsRequests(before, "ListQueues")

	resp, err := http.Post(r.base+"/api/v1/dlqs/"+url.PathEscape(id)+"/replay", "application/json", strings.NewReader(`{"selection":{"all":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	var accepted struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	err = json.NewDecoder(resp.Body).Decode(&accepted)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST replay: %d %v, want 202 and a job", resp.StatusCode, err)
	}
	eventually(t, "the replay succeeded", func() bool {
		_, body := r.get(t, "/api/v1/replays/"+accepted.Job.ID)
		return strings.Contains(body, `"state":"succeeded"`)
	})
	// eventually's deadline (30 s) is far below the account's 4 minutes:
	// only a re-read after the job can show these.
	want := []string{
		`queuewatch_dlq_messages{broker="sqs",cluster="local",dlq="` + dlq + `",source="` + source + `",vhost=""} 0`,
		`queuewatch_sqs_queue_messages{cluster="local",queue="` + source + `",state="visible"} 3`,
		`queuewatch_sqs_queue_messages{cluster="local",queue="` + dlq + `",state="visible"} 0`,
	}
	var metrics string
	eventually(t, "the DLQ at 0 and its source at 3 in /metrics", func() bool {
		_, metrics = r.get(t, "/metrics")
		for _, w := range want {
			if !strings.Contains(metrics, w) {
				return false
			}
		}
		return true
	})
	if got := sqsRequests(metrics, "ListQueues"); got != lists {
		t.Errorf("ListQueues went from %d to %d: the account was read again, not the two queues", lists, got)
	}
	_, page := r.get(t, "/sqs/local/queues/"+url.PathEscape(source))
	if !strings.Contains(page, "re-read after job "+accepted.Job.ID) {
		t.Errorf("the source's page does not say its depth was re-read after %s", accepted.Job.ID)
	}
}

// sqsRequests is the value of queuewatch_sqs_api_requests_total for
// action in a /metrics exposition (0 when absent).
func sqsRequests(metrics, action string) int {
	prefix := `queuewatch_sqs_api_requests_total{action="` + action + `",cluster="local"} `
	for line := range strings.SplitSeq(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}
