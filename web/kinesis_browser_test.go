package web

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/alerts"
	brokerkinesis "github.com/queuewatch/queuewatch/brokers/kinesis"
	"github.com/queuewatch/queuewatch/collectors"
	kinesiscol "github.com/queuewatch/queuewatch/collectors/kinesis"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// kinesisWorld is a real stream on kinesis-local with three KCL
// applications' lease tables on moto (written with boto3 in the KCL's
// item layout), read every 4 s by a real Kinesis collector behind the web
// server. billing checkpointed shard 0 at its first of three records and
// its workers keep renewing (stall once two reads see it unmoved); audit
// is caught up and renewed (ok); search renews nothing (stop).
type kinesisWorld struct {
	k      *testenv.KinesisServer
	m      *testenv.MotoServer
	base   string
	stream string
}

func newKinesisWorld(t *testing.T) *kinesisWorld {
	t.Helper()
	w := &kinesisWorld{k: testenv.Kinesis(t), m: testenv.Moto(t), stream: "orders"}
	// Plain names, so the screenshots read like a team's account: this
	// package's moto and kinesis-local serve no other test, and the
	// stream is deleted after, so a rerun (-count) starts afresh.
	tables := map[string]string{"billing": "billing-leases", "audit": "audit-leases", "search": "search-leases"}
	w.k.AWS(t, "kinesis", "create-stream", "--stream-name", w.stream, "--shard-count", "2")
	t.Cleanup(func() {
		// t.Context is done by now: the CLI runs on its own.
		cmd := exec.Command("aws", "--endpoint-url", w.k.Endpoint, "kinesis", "delete-stream", "--stream-name", w.stream)
		cmd.Env = w.k.AWSEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("delete stream: %v: %s", err, out)
		}
		for _, table := range tables {
			cmd := exec.Command("aws", "--endpoint-url", w.m.Endpoint, "dynamodb", "delete-table", "--table-name", table)
			cmd.Env = w.m.AWSEnv()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("delete lease table: %v: %s", err, out)
			}
		}
	})
	w.k.AWS(t, "kinesis", "wait", "stream-exists", "--stream-name", w.stream)
	var seqs []string
	for _, hash := range []string{"0", "0", "0", "340282366920938463463374607431768211455"} {
		var put struct{ SequenceNumber string }
		if err := json.Unmarshal(w.k.AWS(t, "kinesis", "put-record", "--stream-name", w.stream, "--partition-key", "p", "--explicit-hash-key", hash, "--data", "eA=="), &put); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, put.SequenceNumber)
	}
	leases := func(counter int64) map[string][]testenv.KCLLease {
		return map[string][]testenv.KCLLease{
			"billing": {
				{Key: "shardId-000000000000", Owner: "billing-worker-1", Counter: counter, Checkpoint: seqs[0]},
				{Key: "shardId-000000000001", Owner: "billing-worker-2", Counter: counter, Checkpoint: seqs[3]},
			},
			"audit": {
				{Key: "shardId-000000000000", Owner: "audit-worker-1", Counter: counter, Checkpoint: seqs[2]},
				{Key: "shardId-000000000001", Owner: "audit-worker-1", Counter: counter, Checkpoint: seqs[3]},
			},
		}
	}
	for app, l := range leases(1) {
		w.k.KCLLeases(t, w.m.Endpoint, tables[app], true, l, app+"-worker-1")
	}
	w.k.KCLLeases(t, w.m.Endpoint, tables["search"], true, []testenv.KCLLease{
		{Key: "shardId-000000000000", Owner: "search-worker-1", Counter: 7, Checkpoint: seqs[1]},
		{Key: "shardId-000000000001", Owner: "search-worker-1", Counter: 7, Checkpoint: seqs[3]},
	})

	for _, kv := range []string{"AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"} {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	cfg := config.Kinesis{
		Name: "local", Region: testenv.KinesisRegion, Endpoint: w.k.Endpoint, DynamoDBEndpoint: w.m.Endpoint,
		Streams: config.Filter{Include: []string{w.stream}},
	}
	for _, app := range []string{"billing", "audit", "search"} {
		cfg.Applications = append(cfg.Applications, config.KinesisApplication{Name: app, LeaseTable: tables[app], Stream: w.stream, FailoverTime: time.Second})
	}
	cl, err := brokerkinesis.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A read every 4 s, each with up to 15 s on a loaded machine (moto
	// answers a Scan in tens of milliseconds idle, seconds under load).
	src, err := kinesiscol.New(kinesiscol.Options{Cluster: cl, Interval: 4 * time.Second, Tick: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	col := collectors.New([]collectors.Source{src}, collectors.Options{
		Interval: time.Second, Timeout: 15 * time.Second, History: time.Hour,
		Evaluator: alerts.NewEvaluator(alerts.StatusOptions{Window: 5}),
	})
	var wg sync.WaitGroup
	wg.Go(func() { col.Run(ctx) })
	// billing's and audit's workers renew their leases every second, as
	// KCL workers do every failover time / 3, while the test runs.
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for n := int64(2); ; n++ {
			for app, l := range leases(n) {
				renew(ctx, w, tables[app], l)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	ts := httptest.NewServer(New(Options{Monitor: col, Metrics: col.Handler(prometheus.NewRegistry())}))
	t.Cleanup(ts.Close)
	w.base = ts.URL
	return w
}

// renew writes leases with boto3 outside any one test's helper (it runs
// on its own goroutine until ctx ends, where t.Fatal may not be called).
func renew(ctx context.Context, w *kinesisWorld, table string, leases []testenv.KCLLease) {
	req, _ := json.Marshal(map[string]any{"table": table, "leases": leases})
	cmd := exec.CommandContext(ctx, "python3", "../internal/testenv/testdata/kinesis/kcl_leases.py")
	cmd.Env = append(w.k.AWSEnv(), "DYNAMODB_ENDPOINT="+w.m.Endpoint)
	cmd.Stdin = strings.NewReader(string(req))
	_ = cmd.Run() // a renewal lost to the test's end is no failure
}

// kinesisRowJS reads an application's row of the KCL tab as
// "status|lag|shards behind|workers".
const kinesisRowJS = `((name) => {
	const r = document.querySelector('#kinesis tr[data-application="' + name + '"]');
	if (!r) return '';
	const c = r.querySelectorAll('td');
	return [r.getAttribute('data-status'), c[4].textContent, c[5].textContent, c[6].textContent].join('|');
})`

// TestBrowserKinesis: on kinesis-local and moto, the overview's KCL tab
// lists the three applications with their workers and shards behind; the
// one whose checkpoint stays behind while it renews turns stall, the one
// that renews nothing stop (with a "Needs attention" line), the caught-up
// one stays ok; billing's page shows its leases and draws its chart.
func TestBrowserKinesis(t *testing.T) {
	b := newBrowser(t, 1280, 900)
	w := newKinesisWorld(t)

	b.run(t, chromedp.Navigate(w.base+"/?tab=kinesis"))
	b.waitJS(t, "billing stalled, search stopped",
		`document.querySelector('#kinesis tr[data-application="billing"][data-status="stall"]') && document.querySelector('#kinesis tr[data-application="search"][data-status="stop"]')`, 60*time.Second)
	if got := evalJS[string](t, b, kinesisRowJS+`("audit")`); got != "ok|0s|0|1" {
		t.Errorf("audit row %q, want ok, caught up, one worker", got)
	}
	if got := evalJS[string](t, b, kinesisRowJS+`("billing")`); !strings.HasPrefix(got, "stall|") || !strings.HasSuffix(got, "|1|2") {
		t.Errorf("billing row %q, want stall with 1 shard behind and 2 workers", got)
	}
	searchPage := queue.KinesisApplicationPage("local", "search")
	b.waitJS(t, "search needing attention", `document.querySelector(`+jsString(`.att a[href="`+searchPage+`"]`)+`)`, 10*time.Second)
	if reason := evalJS[string](t, b, `document.querySelector('.att-stop .att-reason').textContent`); !strings.Contains(reason, "no lease renewed in") {
		t.Errorf("search's attention line says %q", reason)
	}
	shots := os.Getenv("QW_SCREENSHOTS")
	if shots != "" {
		sqsScreenshot(t, b, w.base+"/?tab=kinesis", shots, "kinesis-overview")
	}

	billing := queue.KinesisApplicationPage("local", "billing")
	b.run(t, chromedp.Navigate(w.base+billing))
	b.waitJS(t, "billing's leases", `document.querySelectorAll('#kinesis-leases tbody tr').length === 2`, 20*time.Second)
	leases := evalJS[string](t, b, `document.querySelector('#kinesis-leases').innerText`)
	for _, want := range []string{"billing-worker-1", "billing-worker-2", "shardId-000000000000", "open"} {
		if !strings.Contains(leases, want) {
			t.Errorf("lease table lacks %q:\n%s", want, leases)
		}
	}
	if s := evalJS[string](t, b, `document.querySelector('.sentence').textContent`); !strings.Contains(s, "checkpoint of shardId-000000000000 unmoved") {
		t.Errorf("billing's sentence %q", s)
	}
	b.waitJS(t, "uPlot canvas and legend", `document.querySelector('#chart[data-chart="kinesis"] canvas') && document.querySelector('#chart .u-legend')`, 20*time.Second)
	if labels := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#chart .u-legend .u-series .u-label')).map(e => e.textContent)`); strings.Join(labels, ",") != "Time,shards behind,lag time" {
		t.Errorf("legend %q", labels)
	}
	b.waitJS(t, "series drawn", drawnPixelsJS+`('#chart') > 30`, 20*time.Second)
	if shots != "" {
		sqsScreenshot(t, b, w.base+billing, shots, "kinesis-application")
	}
	if e := evalJS[string](t, b, `document.querySelector('#chart').getAttribute('data-error') || ''`); e != "" {
		t.Errorf("chart error: %s", e)
	}
	b.checkClean(t)
}
