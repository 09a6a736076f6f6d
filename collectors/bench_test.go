package collectors

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promcollectors "github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/queuewatch/queuewatch/queue"
)

// loadSnapshot has the shape of the Kafka-lag target workload: 200 topics ×
// 12 partitions, 500 groups consuming 3 topics each.
func loadSnapshot() *queue.Snapshot {
	snap := &queue.Snapshot{Broker: queue.Kafka, Cluster: "load", Time: time.Now()}
	for t := range 200 {
		for p := range int32(12) {
			snap.Partitions = append(snap.Partitions, queue.PartitionOffsets{Topic: fmt.Sprintf("load-%03d", t), Partition: p, End: 1000, LastStable: 1000})
		}
	}
	for g := range 500 {
		cg := queue.ConsumerGroup{Cluster: "load", Name: fmt.Sprintf("group-%03d", g), State: "Stable", Type: queue.GroupClassic, Members: 3, Status: queue.StatusOK}
		for k := range 3 {
			for p := range int32(12) {
				cg.Partitions = append(cg.Partitions, queue.PartitionLag{
					Topic: fmt.Sprintf("load-%03d", (g*3+k)%200), Partition: p, Committed: 900, HasCommit: true,
					End: 1000, Lag: 100, LagSeconds: 12.5,
				})
			}
		}
		snap.Groups = append(snap.Groups, cg)
	}
	return snap
}

// BenchmarkScrapeUncached measures gathering and encoding 18,000
// group-partitions from scratch, as client_golang's handler would on every scrape.
func BenchmarkScrapeUncached(b *testing.B) {
	snap := loadSnapshot()
	c := New([]Source{&scriptedSource{
		broker: queue.Kafka, cluster: "load",
		results: []func() (*queue.Snapshot, error){ok(snap)},
	}}, Options{})
	c.PollOnce(context.Background())
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	var size int
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size)/1024, "KiB-gzip")
}

// BenchmarkScrapeHandler measures a gzip'd scrape through Handler, which
// serves the exposition cached since the last poll.
func BenchmarkScrapeHandler(b *testing.B) {
	snap := loadSnapshot()
	c := New([]Source{&scriptedSource{
		broker: queue.Kafka, cluster: "load",
		results: []func() (*queue.Snapshot, error){ok(snap)},
	}}, Options{})
	c.PollOnce(context.Background())
	process := prometheus.NewRegistry()
	process.MustRegister(promcollectors.NewGoCollector())
	h := c.Handler(process)
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	h.ServeHTTP(httptest.NewRecorder(), req) // the first scrape after a poll encodes
	var size int
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size)/1024, "KiB-gzip")
}

// BenchmarkExposition measures building the cached exposition, which happens
// once per poll: what each poll adds to a scrape's cost.
func BenchmarkExposition(b *testing.B) {
	snap := loadSnapshot()
	c := New([]Source{&scriptedSource{
		broker: queue.Kafka, cluster: "load",
		results: []func() (*queue.Snapshot, error){ok(snap)},
	}}, Options{})
	c.PollOnce(context.Background())
	gen := c.generation.Load()
	for b.Loop() {
		gen++
		enc, err := c.exposition.rebuild(gen)
		if err != nil {
			b.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(enc.gz))
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, zr)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n)/1024, "KiB-plain")
		b.ReportMetric(float64(len(enc.gz))/1024, "KiB-gzip")
	}
}
