package collectors

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	promcollectors "github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/queuewatch/queuewatch/queue"
)

// samples flattens metric families into "name{sorted labels} value" lines.
func samples(t *testing.T, mfs map[string]*dto.MetricFamily) []string {
	t.Helper()
	var out []string
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, lp := range m.GetLabel() {
				labels = append(labels, lp.GetName()+"="+lp.GetValue())
			}
			sort.Strings(labels)
			var v float64
			switch {
			case m.GetGauge() != nil:
				v = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				v = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				v = float64(m.GetHistogram().GetSampleCount())
			}
			out = append(out, name+"{"+strings.Join(labels, ",")+"} "+model.SampleValue(v).String()+" "+mf.GetHelp())
		}
	}
	sort.Strings(out)
	return out
}

func parseText(t *testing.T, r io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("parse exposition: %v", err)
	}
	return mfs
}

// TestTextMatchesCollect holds the fast text exposition to exactly what the
// client_golang registry produces from Collect, hostile label values
// included.
func TestTextMatchesCollect(t *testing.T) {
	k := kafkaSnapshot()
	k.Groups[0].Name = "quote\" back\\slash\nnewline ünïcode"
	k.Groups[0].ETA = queue.ETA{Known: true, FallingBehind: true}
	r := rabbitSnapshot()
	r.Queues[0].Name = `a/b %2F "q"`
	c := New([]Source{
		&scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){ok(k)}},
		&scriptedSource{broker: queue.RabbitMQ, cluster: "main", results: []func() (*queue.Snapshot, error){ok(r)}},
	}, Options{Metrics: everyFamily})
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
	got := parseText(t, rec.Body)

	ws, gs := samples(t, want), samples(t, got)
	if strings.Join(ws, "\n") != strings.Join(gs, "\n") {
		t.Errorf("text exposition differs from Collect:\nwant %d samples\n%s\ngot %d samples\n%s",
			len(ws), strings.Join(ws, "\n"), len(gs), strings.Join(gs, "\n"))
	}
	if !math.IsInf(got["queuewatch_kafka_consumergroup_catchup_eta_seconds"].GetMetric()[0].GetGauge().GetValue(), 1) {
		t.Error("falling behind is not +Inf")
	}
}

func TestHandlerGzipAndProcessMetrics(t *testing.T) {
	c := New([]Source{&scriptedSource{
		broker: queue.Kafka, cluster: "prod",
		results: []func() (*queue.Snapshot, error){ok(kafkaSnapshot())},
	}}, Options{})
	c.PollOnce(context.Background())
	process := prometheus.NewRegistry()
	process.MustRegister(promcollectors.NewGoCollector())
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip, deflate")
	rec := httptest.NewRecorder()
	c.Handler(process).ServeHTTP(rec, req)
	if rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("not gzipped: %v", rec.Header())
	}
	zr, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes())) // reads both members
	if err != nil {
		t.Fatal(err)
	}
	mfs := parseText(t, zr)
	for _, name := range []string{"go_goroutines", "queuewatch_kafka_consumergroup_lag", "queuewatch_collector_duration_seconds"} {
		if mfs[name] == nil {
			t.Errorf("%s missing from the gzip'd exposition", name)
		}
	}
	if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Errorf("content type %q", rec.Header().Get("Content-Type"))
	}
}

// TestPlainWhileGzipIsBuilt checks that a gzip scrape arriving while the
// compressed copy is being built gets the plain text, correctly labelled.
func TestPlainWhileGzipIsBuilt(t *testing.T) {
	c := New([]Source{&scriptedSource{
		broker: queue.Kafka, cluster: "prod",
		results: []func() (*queue.Snapshot, error){ok(kafkaSnapshot())},
	}}, Options{})
	c.PollOnce(context.Background())
	built := c.exposition.current.Load()
	zr, err := gzip.NewReader(bytes.NewReader(built.gz))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	c.exposition.current.Store(&encoded{gen: built.gen, plain: [][]byte{plain}}) // as between the two stores
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	c.Handler(prometheus.NewRegistry()).ServeHTTP(rec, req)
	if enc := rec.Header().Get("Content-Encoding"); enc != "" {
		t.Fatalf("Content-Encoding %q with no gzipped copy yet", enc)
	}
	if mfs := parseText(t, rec.Body); mfs["queuewatch_kafka_consumergroup_lag"] == nil {
		t.Error("lag missing from the plain exposition")
	}
}

// TestExpositionFollowsPolls checks the cache is rebuilt after every poll.
func TestExpositionFollowsPolls(t *testing.T) {
	n := 0
	src := &scriptedSource{broker: queue.Kafka, cluster: "prod", results: []func() (*queue.Snapshot, error){
		func() (*queue.Snapshot, error) {
			n++
			s := kafkaSnapshot()
			s.Groups[0].Members = n
			return s, nil
		},
	}}
	c := New([]Source{src}, Options{})
	h := c.Handler(prometheus.NewRegistry())
	for want := 1; want <= 3; want++ {
		c.PollOnce(context.Background())
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		line := `queuewatch_kafka_consumergroup_members{cluster="prod",group="billing"} ` + string(rune('0'+want))
		if !strings.Contains(rec.Body.String(), line+"\n") {
			t.Errorf("after poll %d the exposition lacks %s", want, line)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{"gzip": true, "deflate, gzip;q=1.0": true, "gzip;q=0": false, "identity": false, "": false} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Accept-Encoding", h)
		if got := acceptsGzip(r); got != want {
			t.Errorf("acceptsGzip(%q) = %v", h, got)
		}
	}
}
