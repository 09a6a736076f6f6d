package collectors

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// scrapeText polls snap once with m and returns the /metrics text.
func scrapeText(t *testing.T, snap *queue.Snapshot, m config.Metrics) string {
	t.Helper()
	c := New([]Source{&scriptedSource{broker: queue.Kafka, cluster: snap.Cluster, results: []func() (*queue.Snapshot, error){ok(snap)}}},
		Options{Metrics: m})
	c.PollOnce(context.Background())
	rec := httptest.NewRecorder()
	c.Handler(prometheus.NewRegistry()).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, err := io.ReadAll(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// TestUnreadPartitionHasNoLagSeries checks that a partition the group never
// committed and no member reads exports no per-partition series (its lag is
// "-" to kafka-consumer-groups.sh), while its records still count in the
// topic lag and commit_gaps counts it.
func TestUnreadPartitionHasNoLagSeries(t *testing.T) {
	snap := kafkaSnapshot()
	snap.Groups[0].Partitions[1].Member = ""
	text := scrapeText(t, snap, everyFamily)
	for _, want := range []string{
		`queuewatch_kafka_consumergroup_lag{cluster="prod",group="billing",partition="0",topic="orders"} 20`,
		`queuewatch_kafka_consumergroup_topic_lag{cluster="prod",group="billing",topic="orders"} 100`,
		`queuewatch_kafka_consumergroup_uncommitted_partitions{cluster="prod",group="billing",topic="orders"} 1`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, absent := range []string{
		`queuewatch_kafka_consumergroup_lag{cluster="prod",group="billing",partition="1",`,
		`queuewatch_kafka_consumergroup_lag_seconds{cluster="prod",group="billing",partition="1",`,
	} {
		if strings.Contains(text, absent) {
			t.Errorf("/metrics has %s… for a partition nobody committed or reads", absent)
		}
	}

	// Assigned to a member, the same partition is read: its lag is exported.
	snap.Groups[0].Partitions[1].Member = "consumer-2"
	text = scrapeText(t, snap, everyFamily)
	if want := `queuewatch_kafka_consumergroup_lag{cluster="prod",group="billing",partition="1",topic="orders"} 80`; !strings.Contains(text, want+"\n") {
		t.Errorf("/metrics lacks %s for an assigned partition", want)
	}
}

// TestNoETAWithoutMembers checks that a group without members, which reads
// nothing, exports no catch-up ETA, and one with members does.
func TestNoETAWithoutMembers(t *testing.T) {
	snap := kafkaSnapshot()
	const eta = `queuewatch_kafka_consumergroup_catchup_eta_seconds{cluster="prod",group="billing"}`
	if text := scrapeText(t, snap, config.Metrics{Granularity: config.GranularityPartition}); !strings.Contains(text, eta+" 90\n") {
		t.Errorf("/metrics lacks %s 90 for a group with 2 members", eta)
	}
	snap.Groups[0].Members = 0
	snap.Groups[0].ETA.FallingBehind = true
	if text := scrapeText(t, snap, config.Metrics{Granularity: config.GranularityPartition}); strings.Contains(text, eta) {
		t.Errorf("/metrics has %s for a group without members", eta)
	}
}

// TestAppendFloatIntegers checks that integral values take the shorter of
// their exact forms, and everything else client_golang's 'g' form.
func TestAppendFloatIntegers(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 1: "1", -1: "-1", 80: "80", 999999: "999999",
		1e6: "1e+06", 1234567: "1234567", 123456789012: "123456789012", 12e9: "1.2e+10", -7654321: "-7654321",
		12.5: "12.5", 1.7654321234567e9: "1.7654321234567e+09", 1 << 53: "9.007199254740992e+15",
	} {
		if got := string(appendFloat(nil, v)); got != want {
			t.Errorf("appendFloat(%v) = %s, want %s", v, got, want)
		}
	}
}
