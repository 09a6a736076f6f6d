package rabbitmq

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/internal/tune"
)

// BenchmarkPoll10kQueues polls 10,000 queues in 10 vhosts (one dead-letter
// pair through a direct DLX per vhost) and, in the same run, scrapes RabbitMQ's own
// rabbitmq_prometheus per-object endpoint for comparison. Run it with
//
//	go test -run '^$' -bench Poll10k -benchtime 9x ./collectors/rabbitmq/
//
// queuewatch runs with its shipped runtime defaults. Queues are declared
// over AMQP without waiting for each answer; creating them through the
// HTTP API would take minutes.
func BenchmarkPoll10kQueues(b *testing.B) {
	tune.Apply("serve") // for the whole test binary: this is its only benchmark
	a := requireRabbit(b)
	const vhosts, perVHost = 10, 1000
	for range vhosts {
		vh := a.VHost("bench")
		ch := channel(b, vh)
		for j := range perVHost - 2 {
			if _, err := ch.QueueDeclare(queueName(j), false, false, false, true, nil); err != nil {
				b.Fatal(err)
			}
		}
		if err := ch.ExchangeDeclare("dlx", "direct", false, false, false, false, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := ch.QueueDeclare("src", false, false, false, false, map[string]any{
			"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "dead",
		}); err != nil {
			b.Fatal(err)
		}
		if _, err := ch.QueueDeclare("src.dead", false, false, false, false, nil); err != nil {
			b.Fatal(err)
		}
		if err := ch.QueueBind("src.dead", "dead", "dlx", false, nil); err != nil {
			b.Fatal(err)
		}
		publish(b, ch, "", "src.dead", text("x"))
	}
	s := newSource(b, config.RabbitMQ{ManagementURL: testenv.ManagementURL}, Options{})
	poll(b, s) // dial the AMQP connections outside the measurement

	b.ReportAllocs()
	var queues, dlqs int
	var pollTime time.Duration
	var polls []time.Duration
	before := s.HTTPRequests()
	n := 0
	for b.Loop() {
		snap := poll(b, s)
		queues, dlqs = len(snap.Queues), len(snap.DLQs)
		pollTime += snap.Duration
		polls = append(polls, snap.Duration)
		n++
	}
	b.StopTimer()
	if queues < vhosts*perVHost || dlqs < vhosts {
		b.Fatalf("%d queues and %d DLQs, want at least %d and %d", queues, dlqs, vhosts*perVHost, vhosts)
	}
	b.ReportMetric(float64(s.HTTPRequests()-before)/float64(n), "http-requests/poll")
	b.ReportMetric(pollTime.Seconds()/float64(n), "s/poll")
	slices.Sort(polls)
	b.ReportMetric(polls[len(polls)/2].Seconds(), "s/poll-median")
	b.ReportMetric(polls[len(polls)-1].Seconds(), "s/poll-max")
	b.ReportMetric(float64(queues), "queues")

	// The management API's share of a poll; the rest is AMQP and building.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	if _, err := s.readManagement(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(start).Seconds(), "s/management-read")

	scrape, size := scrapePerObject(b)
	b.ReportMetric(scrape.Seconds(), "s/rabbitmq-per-object-scrape")
	b.ReportMetric(float64(size)/1e6, "MB/rabbitmq-per-object-scrape")

	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "MB-maxrss")
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/1e6, "MB-heap-inuse")
}

// scrapePerObject times one scrape of rabbitmq_prometheus's per-object
// endpoint, which lists every queue's metrics.
func scrapePerObject(b *testing.B) (time.Duration, int64) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:15692/metrics/per-object", nil)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Logf("rabbitmq_prometheus not reachable: %v", err)
		return 0, 0
	}
	defer resp.Body.Close()
	n, _ := io.Copy(io.Discard, resp.Body)
	return time.Since(start), n
}
