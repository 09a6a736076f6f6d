package app

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// seededCluster starts a kfake cluster with topic orders (2 partitions, 10
// records each) and group billing committed at 4 and 10: lag 6 and 0.
func seededCluster(t *testing.T, ports []int, dir string) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.Ports(ports...), kfake.DataDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		for range 10 {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("{}")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 4, LeaderEpoch: -1})
	os.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 10, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "billing", os); err != nil {
		t.Fatal(err)
	}
	return c
}

// running is queuewatch started with Run against cfg.
type running struct {
	base string
	done chan error
	stop context.CancelFunc
}

func start(t *testing.T, cfg *config.Config) *running {
	t.Helper()
	return startWith(t, Options{Config: cfg})
}

// startWith is start with more options (a logger); Listen and Listening
// are its own.
func startWith(t *testing.T, opts Options) *running {
	t.Helper()
	cfg := opts.Config
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	r := &running{done: make(chan error, 1), stop: cancel}
	go func() {
		opts.Listen, opts.Listening = "127.0.0.1:0", func(a string) { addr <- a }
		r.done <- Run(ctx, opts)
	}()
	select {
	case a := <-addr:
		r.base = "http://" + a
	case err := <-r.done:
		t.Fatalf("Run returned before listening: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not start listening")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after cancel")
		}
	})
	return r
}

func (r *running) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(r.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func testConfig(t *testing.T, clusters ...config.Kafka) *config.Config {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.PollInterval = time.Second
	cfg.PollTimeout = time.Second
	cfg.Alerts.Window = 3
	cfg.History = time.Minute
	cfg.Kafka = clusters
	return cfg
}

func TestRunServesLag(t *testing.T) {
	c := seededCluster(t, testenv.FreePorts(t, 1), t.TempDir())
	defer c.Close()
	r := start(t, testConfig(t, config.Kafka{Name: "prod", Brokers: c.ListenAddrs()}))

	eventually(t, "readyz", func() bool { code, _ := r.get(t, "/readyz"); return code == 200 })
	if code, _ := r.get(t, "/healthz"); code != 200 {
		t.Errorf("healthz %d", code)
	}
	_, metrics := r.get(t, "/metrics")
	for _, want := range []string{
		`queuewatch_kafka_consumergroup_lag{cluster="prod",group="billing",partition="0",topic="orders"} 6`,
		`queuewatch_kafka_consumergroup_lag{cluster="prod",group="billing",partition="1",topic="orders"} 0`,
		`queuewatch_kafka_consumergroup_topic_lag{cluster="prod",group="billing",topic="orders"} 6`,
		`queuewatch_collector_up{broker="kafka",cluster="prod"} 1`,
		`queuewatch_kafka_consumergroup_status{cluster="prod",group="billing",status="stop"} 1`,
		`queuewatch_build_info{`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if code, page := r.get(t, "/"); code != 200 || !strings.Contains(page, "billing") {
		t.Errorf("overview %d without the group", code)
	}
	if code, page := r.get(t, "/kafka/prod/groups/billing"); code != 200 || !strings.Contains(page, "orders") {
		t.Errorf("group page %d", code)
	}
}

func TestGroupDeletedVanishesFromMetrics(t *testing.T) {
	c := seededCluster(t, testenv.FreePorts(t, 1), t.TempDir())
	defer c.Close()
	r := start(t, testConfig(t, config.Kafka{Name: "prod", Brokers: c.ListenAddrs()}))
	const series = `queuewatch_kafka_consumergroup_lag{cluster="prod",group="billing"`
	eventually(t, "billing lag", func() bool { _, m := r.get(t, "/metrics"); return strings.Contains(m, series) })

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).DeleteGroup(context.Background(), "billing"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "billing to vanish", func() bool {
		_, m := r.get(t, "/metrics")
		return !strings.Contains(m, `group="billing"`)
	})
}

// TestClusterDownOthersUnaffected stops one of two clusters: its collector
// reports down while the other keeps reporting, and it recovers when the
// cluster comes back on the same ports, without restarting queuewatch.
func TestClusterDownOthersUnaffected(t *testing.T) {
	a := seededCluster(t, testenv.FreePorts(t, 1), t.TempDir())
	defer a.Close()
	bPorts, bDir := testenv.FreePorts(t, 3), t.TempDir()
	b := seededCluster(t, bPorts, bDir)
	r := start(t, testConfig(t,
		config.Kafka{Name: "a", Brokers: a.ListenAddrs()},
		config.Kafka{Name: "b", Brokers: b.ListenAddrs()},
	))
	upA := `queuewatch_collector_up{broker="kafka",cluster="a"} 1`
	eventually(t, "both up", func() bool {
		_, m := r.get(t, "/metrics")
		return strings.Contains(m, upA) && strings.Contains(m, `queuewatch_collector_up{broker="kafka",cluster="b"} 1`)
	})

	b.Close()
	eventually(t, "b down", func() bool {
		_, m := r.get(t, "/metrics")
		return strings.Contains(m, `queuewatch_collector_up{broker="kafka",cluster="b"} 0`)
	})
	_, m := r.get(t, "/metrics")
	if !strings.Contains(m, upA) || !strings.Contains(m, `queuewatch_kafka_consumergroup_lag{cluster="a",group="billing",partition="0",topic="orders"} 6`) {
		t.Error("cluster a stopped reporting while b was down")
	}
	if _, page := r.get(t, "/"); !strings.Contains(page, "kafka:b down") {
		t.Error("overview does not show b down")
	}

	b2, err := kfake.NewCluster(kfake.Ports(bPorts...), kfake.DataDir(bDir))
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	eventually(t, "b back", func() bool {
		_, m := r.get(t, "/metrics")
		return strings.Contains(m, `queuewatch_collector_up{broker="kafka",cluster="b"} 1`)
	})
}

// TestRunHonoursMetricsGranularity: the metrics section of the config
// reaches the collector, so /metrics has the topic granularity's series and
// none of the per-partition ones.
func TestRunHonoursMetricsGranularity(t *testing.T) {
	c := seededCluster(t, testenv.FreePorts(t, 1), t.TempDir())
	defer c.Close()
	cfg := testConfig(t, config.Kafka{Name: "prod", Brokers: c.ListenAddrs()})
	cfg.Metrics = config.Metrics{Granularity: config.GranularityTopic}
	r := start(t, cfg)
	const topicLag = `queuewatch_kafka_consumergroup_topic_lag{cluster="prod",group="billing",topic="orders"} 6`
	var metrics string
	eventually(t, "billing topic lag", func() bool { _, metrics = r.get(t, "/metrics"); return strings.Contains(metrics, topicLag) })
	for _, absent := range []string{"queuewatch_kafka_consumergroup_lag{", "queuewatch_kafka_consumergroup_members{"} {
		if strings.Contains(metrics, absent) {
			t.Errorf("/metrics at topic granularity has %s", absent)
		}
	}
}
