package app

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// shardedClusters starts n seeded kfake clusters named c0…c(n-1).
func shardedClusters(t *testing.T, n int) []config.Kafka {
	t.Helper()
	var out []config.Kafka
	for i := range n {
		c := seededCluster(t, testenv.FreePorts(t, 1), t.TempDir())
		t.Cleanup(c.Close)
		out = append(out, config.Kafka{Name: fmt.Sprintf("c%d", i), Brokers: c.ListenAddrs()})
	}
	return out
}

// shardedNATS starts n embedded JetStream servers named n0…n(n-1), each
// with stream ORDERS holding 5 messages that durable consumer worker
// has not read.
func shardedNATS(t *testing.T, n int) []config.NATS {
	t.Helper()
	var out []config.NATS
	for i := range n {
		srv := testenv.NATSEmbedded(t)
		nc, err := nats.Connect(srv.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", jetstream.ConsumerConfig{Durable: "worker", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if _, err := js.Publish(ctx, "orders.new", []byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
		nc.Close()
		out = append(out, config.NATS{Name: fmt.Sprintf("n%d", i), URL: srv.ClientURL()})
	}
	return out
}

// volatile are series whose values depend on when and how fast a poll
// ran, not on what it read: compared by name only.
func volatile(series string) bool {
	for _, s := range []string{"_seconds", "timestamp", "queuewatch_build_info"} {
		if strings.Contains(series, s) {
			return true
		}
	}
	return false
}

// queuewatchSeries parses a text exposition into its queuewatch_ series
// and their values (HELP, TYPE and other namespaces left out).
func queuewatchSeries(t *testing.T, exposition string) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(exposition))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "queuewatch_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		series, value := line[:i], line[i+1:]
		if volatile(series) {
			value = "*"
		}
		out[series] = value
	}
	return out
}

// readyMetrics waits until r is ready and every cluster it polls has
// published its lag, then returns its queuewatch_ series.
func readyMetrics(t *testing.T, r *running, clusters int) map[string]string {
	t.Helper()
	var got map[string]string
	eventually(t, "every owned cluster's lag", func() bool {
		if code, _ := r.get(t, "/readyz"); code != 200 {
			return false
		}
		_, body := r.get(t, "/metrics")
		got = queuewatchSeries(t, body)
		// Lag time comes with a later poll than lag (the record's
		// timestamp is read after the offsets): wait for both.
		lag, lagTime := 0, 0
		for s := range got {
			switch {
			case strings.HasPrefix(s, "queuewatch_kafka_consumergroup_topic_lag{"):
				lag++
			case strings.HasPrefix(s, "queuewatch_kafka_consumergroup_max_lag_seconds{"):
				lagTime++
			}
		}
		return lag == clusters && lagTime == clusters
	})
	return got
}

// TestShardsAddUpToTheWhole runs one replica with shard count 1 and three
// with count 3 over six kfake clusters and three NATS servers: each shard
// polls a part, no cluster twice, and the union of the three /metrics is
// the single replica's (same series; same values but for timings).
func TestShardsAddUpToTheWhole(t *testing.T) {
	clusters, natsClusters := shardedClusters(t, 6), shardedNATS(t, 3)
	newConfig := func() *config.Config {
		cfg := testConfig(t, clusters...)
		cfg.NATS = natsClusters
		return cfg
	}
	whole := readyMetrics(t, start(t, newConfig()), len(clusters))
	if _, ok := whole[`queuewatch_nats_consumer_pending_messages{cluster="n0",consumer="worker",stream="ORDERS"}`]; !ok {
		t.Fatal("one replica exports no NATS consumer backlog: the NATS part would compare nothing")
	}

	const count = 3
	owned := map[int]int{}
	for _, c := range clusters {
		owned[config.Shard{Count: count}.Owner("kafka", c.Name)]++
	}
	if len(owned) != count {
		t.Fatalf("clusters per shard %v: the test needs every shard to own one", owned)
	}
	union := map[string]string{}
	for i := range count {
		cfg := newConfig()
		cfg.Shard.Index, cfg.Shard.Count = i, count
		part := readyMetrics(t, start(t, cfg), owned[i])
		for s, v := range part {
			// A series of a cluster on two shards is a cluster polled
			// twice; process-wide series (build info) are on every one.
			if _, dup := union[s]; dup && strings.Contains(s, "cluster=") {
				t.Errorf("shard %d also exports %s: a cluster polled twice", i, s)
			}
			union[s] = v
		}
	}
	for _, s := range slices.Sorted(maps.Keys(whole)) {
		if u, ok := union[s]; !ok {
			t.Errorf("no shard exports %s", s)
		} else if u != whole[s] {
			t.Errorf("%s = %s across shards, %s on one replica", s, u, whole[s])
		}
	}
	for _, s := range slices.Sorted(maps.Keys(union)) {
		if _, ok := whole[s]; !ok {
			t.Errorf("shards export %s, one replica does not", s)
		}
	}
	if len(whole) < 6*5 {
		t.Fatalf("only %d series compared: the comparison would prove little", len(whole))
	}
}

// TestShardPageSendsToOwner opens the group page of a cluster another
// shard polls: the answer names the shard and links to the same page on
// its replica; a cluster it polls shows as usual, and an unknown one is
// still a 404.
func TestShardPageSendsToOwner(t *testing.T) {
	clusters := shardedClusters(t, 2)
	shard := config.Shard{Count: 2, PeerURL: "http://queuewatch-{index}.queuewatch:8080"}
	mine, other := clusters[0].Name, clusters[1].Name
	if shard.Owner("kafka", mine) == shard.Owner("kafka", other) {
		t.Fatal("c0 and c1 hash to one shard: pick other names")
	}
	shard.Index = shard.Owner("kafka", mine)
	cfg := testConfig(t, clusters...)
	cfg.Shard = shard
	r := start(t, cfg)
	readyMetrics(t, r, 1)

	code, page := r.get(t, "/kafka/"+other+"/groups/billing?range=1h")
	owner := shard.Owner("kafka", other)
	link := fmt.Sprintf("http://queuewatch-%d.queuewatch:8080/kafka/%s/groups/billing?range=1h", owner, other)
	if code != 421 || !strings.Contains(page, fmt.Sprintf("kafka:%s is watched by shard %d", other, owner)) || !strings.Contains(page, `href="`+link+`"`) {
		t.Errorf("page of a cluster shard %d polls: %d, want 421 naming the shard and linking %s:\n%s", owner, code, link, page)
	}
	if code, page := r.get(t, "/kafka/"+mine+"/groups/billing"); code != 200 || !strings.Contains(page, "orders") {
		t.Errorf("page of an owned cluster: %d", code)
	}
	if code, _ := r.get(t, "/kafka/nosuch/groups/billing"); code != 404 {
		t.Errorf("page of an unknown cluster: %d, want 404", code)
	}
}

// TestCheckReportsShard runs check as one shard of two: it says what it
// polls and what it leaves, and checks only its own clusters.
func TestCheckReportsShard(t *testing.T) {
	clusters := shardedClusters(t, 2)
	cfg := testConfig(t, clusters...)
	cfg.Shard = config.Shard{Count: 2}
	cfg.Shard.Index = cfg.Shard.Owner("kafka", "c0")
	other := cfg.Shard.Owner("kafka", "c1")
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Check(t.Context(), cfg, &out, nil); err != nil {
		t.Fatalf("check: %v\n%s", err, out.String())
	}
	want := fmt.Sprintf("shard %d/2: polls kafka:c0\n     left to other shards: kafka:c1 (shard %d)\nok   kafka:c0:", cfg.Shard.Index, other)
	if !strings.HasPrefix(out.String(), want) || strings.Contains(out.String(), "ok   kafka:c1") {
		t.Errorf("check wrote\n%s\nwant it to start\n%s\nand not check c1", out.String(), want)
	}
}
