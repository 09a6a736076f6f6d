package web

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// benchMonitor is a production-sized fleet: every group and DLQ has an
// hour of history at a 15 s poll interval (240 points), like the real
// collector keeps by default.
type benchMonitor struct {
	staticMonitor
	groupHist []queue.ReaderPoint
	dlqHist   []queue.DLQPoint
}

// ReaderHistory copies like the collector does, so the cost is realistic.
func (m benchMonitor) ReaderHistory(k queue.ReaderKey) []queue.ReaderPoint {
	return append([]queue.ReaderPoint(nil), m.groupHist...)
}

func (m benchMonitor) DLQHistory(id string) []queue.DLQPoint {
	return append([]queue.DLQPoint(nil), m.dlqHist...)
}

func benchServer(groups, partitionsPerGroup, dlqs, bigGroupPartitions int) *Server {
	now := time.Now()
	snap := &queue.Snapshot{Broker: queue.Kafka, Cluster: "prod", Time: now}
	statuses := []queue.Status{queue.StatusOK, queue.StatusOK, queue.StatusOK, queue.StatusWarn, queue.StatusStall, queue.StatusStop, queue.StatusRewind}
	for i := range groups {
		g := queue.ConsumerGroup{
			Cluster: "prod", Name: fmt.Sprintf("service-%05d-consumer", i), State: "Stable", Members: 3,
			Status: statuses[i%len(statuses)], StatusReason: "committed offset has not moved for 6m while lag is 12,400",
		}
		for p := range partitionsPerGroup {
			g.Partitions = append(g.Partitions, queue.PartitionLag{
				Topic: fmt.Sprintf("topic-%d", i%50), Partition: int32(p),
				Committed: 1000, HasCommit: true, End: 1000 + int64(i*p), Lag: int64(i * p), LagSeconds: float64(p),
			})
		}
		snap.Groups = append(snap.Groups, g)
	}
	big := queue.ConsumerGroup{Cluster: "prod", Name: "big", State: "Stable", Members: 40, Status: queue.StatusWarn}
	for p := range bigGroupPartitions {
		big.Partitions = append(big.Partitions, queue.PartitionLag{
			Topic: fmt.Sprintf("events-%d", p%8), Partition: int32(p),
			Committed: 5000, HasCommit: true, End: 5000 + int64(p*7), Lag: int64(p * 7), LagSeconds: float64(p % 90),
			Member: fmt.Sprintf("consumer-%d-4f1c2a", p%40), Host: fmt.Sprintf("/10.0.%d.%d", p%4, p%40),
		})
	}
	snap.Groups = append(snap.Groups, big)
	for i := range dlqs {
		snap.DLQs = append(snap.DLQs, queue.DLQ{
			Broker: queue.Kafka, Cluster: "prod", Name: fmt.Sprintf("orders-%03d.DLT", i),
			Sources: []string{fmt.Sprintf("orders-%03d", i)}, Messages: int64(i % 5 * 100), OldestAge: time.Hour, HasOldestAge: i%5 != 0,
		})
	}
	m := benchMonitor{staticMonitor: staticMonitor{
		ready: true, snaps: []*queue.Snapshot{snap},
		statuses: []queue.SourceStatus{{Broker: queue.Kafka, Cluster: "prod", Up: true, Polled: true, LastPoll: now}},
	}}
	for i := range 240 {
		at := now.Add(time.Duration(i-240) * 15 * time.Second)
		m.groupHist = append(m.groupHist, queue.ReaderPoint{At: at, Backlog: int64(i * 37 % 1000), LagSeconds: float64(i % 60), HasLagSeconds: true})
		m.dlqHist = append(m.dlqHist, queue.DLQPoint{At: at, Messages: int64(i)})
	}
	return New(Options{Metrics: http.NotFoundHandler(), Monitor: m})
}

func benchGet(b *testing.B, s *Server, target string) {
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		if rec.Code != 200 {
			b.Fatalf("%s: %d", target, rec.Code)
		}
	}
}

// BenchmarkOverview renders / for 2,000 groups (10 partitions each) and
// 300 DLQs. Budget: 30 ms.
func BenchmarkOverview(b *testing.B) {
	benchGet(b, benchServer(2000, 10, 300, 0), "/")
}

// BenchmarkOverviewPartial is the 5 s live refresh of the same page.
func BenchmarkOverviewPartial(b *testing.B) {
	benchGet(b, benchServer(2000, 10, 300, 0), "/?partial=1")
}

// BenchmarkOverviewDLQs renders the DLQ tab (300 DLQs, 200 with sparklines).
func BenchmarkOverviewDLQs(b *testing.B) {
	benchGet(b, benchServer(2000, 10, 300, 0), "/?tab=dlqs")
}

// BenchmarkGroupPage renders a group with 1,000 partitions, sorted by lag
// (the page shows 200 rows; sorting and the topic breakdown cover all).
// Budget: 20 ms.
func BenchmarkGroupPage(b *testing.B) {
	benchGet(b, benchServer(10, 1, 0, 1000), "/kafka/prod/groups/big?sort=lag&dir=desc")
}

// TestPageWeight checks what a first visit downloads, compressed: the
// overview (2,000 groups) or the group page (1,000 partitions) plus every
// asset it loads. Budget: 300 KB.
func TestPageWeight(t *testing.T) {
	s := benchServer(2000, 10, 300, 1000)
	for _, tc := range []struct {
		page   string
		assets []string
	}{
		{"/", []string{"app.css", "app.js", "vendor/htmx.min.js", "favicon.svg"}},
		{"/kafka/prod/groups/big", []string{"app.css", "app.js", "vendor/htmx.min.js", "favicon.svg", "vendor/uPlot.iife.min.js", "vendor/uPlot.min.css"}},
	} {
		total := 0
		html := gzipGet(t, s, tc.page)
		total += html
		for _, a := range tc.assets {
			total += gzipGet(t, s, "/static/"+a)
		}
		t.Logf("%s: HTML %.1f KB gzip, with assets %.1f KB", tc.page, float64(html)/1024, float64(total)/1024)
		if total > 300*1024 {
			t.Errorf("%s weighs %d bytes compressed, budget 300 KB", tc.page, total)
		}
	}
}

// gzipGet fetches target as a browser would (accepting gzip) and returns
// the bytes on the wire, checking the body really is gzip.
func gzipGet(t *testing.T, s *Server, target string) int {
	t.Helper()
	r := httptest.NewRequest("GET", target, nil)
	r.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	if rec.Code != 200 {
		t.Fatalf("%s: %d", target, rec.Code)
	}
	wire := rec.Body.Len()
	if rec.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		if _, err := io.Copy(io.Discard, zr); err != nil {
			t.Fatalf("%s: %v", target, err)
		}
	} else if wire > 1024 {
		t.Errorf("%s (%d bytes) is served uncompressed", target, wire)
	}
	return wire
}
