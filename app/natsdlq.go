package app

import (
	"context"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/dlqreplay"
	dlqnats "github.com/queuewatch/queuewatch/dlqreplay/nats"
)

// natsBackends are the replay backends of the NATS clusters.
func natsBackends(clusters []*brokernats.Cluster, log *slog.Logger) ([]dlqreplay.Backend, error) {
	var out []dlqreplay.Backend
	for _, c := range clusters {
		b, err := dlqnats.New(dlqnats.Options{Cluster: c, Logger: log})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// startNATSCapture runs the dead-letter capture of every NATS cluster
// with dead_letters.capture on, until the returned func is called (it
// waits for them to stop).
func startNATSCapture(ctx context.Context, clusters []*brokernats.Cluster, log *slog.Logger) func() {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, c := range clusters {
		if c.Config().DeadLetters.Capture {
			wg.Go(func() { c.RunCapture(ctx, log) })
		}
	}
	return func() { cancel(); wg.Wait() }
}

// natsLostCollector exports how many dead letters capture found without
// their payload, per cluster that captures, and how many captures failed,
// per stream.
type natsLostCollector struct{ clusters []*brokernats.Cluster }

var (
	descNATSLost = prometheus.NewDesc("queuewatch_nats_dead_letters_lost_total",
		"JetStream dead letters captured without their payload because the original was gone (WorkQueue or Limits retention removed it first) or could not be read, since start.",
		[]string{"cluster"}, nil)
	descNATSCaptureFailures = prometheus.NewDesc("queuewatch_nats_capture_failures_total",
		"Failed attempts to capture a JetStream dead letter of the stream (retried; after 10 deliveries kept without payload), since start.",
		[]string{"cluster", "stream"}, nil)
)

func (c natsLostCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descNATSLost
	ch <- descNATSCaptureFailures
}

func (c natsLostCollector) Collect(ch chan<- prometheus.Metric) {
	for _, cl := range c.clusters {
		if cl.Config().DeadLetters.Capture {
			ch <- prometheus.MustNewConstMetric(descNATSLost, prometheus.CounterValue, float64(cl.LostDeadLetters()), cl.Name())
			for stream, n := range cl.CaptureFailures() {
				ch <- prometheus.MustNewConstMetric(descNATSCaptureFailures, prometheus.CounterValue, float64(n), cl.Name(), stream)
			}
		}
	}
}
