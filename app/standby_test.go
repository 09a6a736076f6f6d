package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestReplicasShareThePolling runs two replicas on one PostgreSQL audit
// store over a kfake cluster that counts the polls it serves: the second
// replica adds no broker load, serves the first one's data in its
// API, exports none of its series (one page, not two), and polls the
// cluster itself once the first stops.
func TestReplicasShareThePolling(t *testing.T) {
	c := seededCluster(t, testenv.FreePorts(t, 1), t.TempDir())
	defer c.Close()
	// Every poll lists the groups once: ListGroups requests are polls.
	var requests atomic.Int64
	c.ControlKey(int16(kmsg.ListGroups), func(kmsg.Request) (kmsg.Response, error, bool) {
		requests.Add(1)
		return nil, nil, false // counted, then served as usual; the control stays
	})
	dsn := testenv.Postgres(t).DSN
	newConfig := func() *config.Config {
		cfg := testConfig(t, config.Kafka{Name: "prod", Brokers: c.ListenAddrs()})
		cfg.Audit.Driver, cfg.Audit.DSN = config.AuditPostgres, dsn
		return cfg
	}
	const lagSeries = `queuewatch_kafka_consumergroup_topic_lag{cluster="prod",group="billing",topic="orders"} 6`
	const standbySeries = `queuewatch_collector_standby{broker="kafka",cluster="prod"} 1`

	a := start(t, newConfig())
	readyMetrics(t, a, 1)
	const window = 8 * time.Second
	n := requests.Load()
	time.Sleep(window)
	one := requests.Load() - n

	b := start(t, newConfig())
	eventually(t, "the standby ready with the owner's snapshot", func() bool {
		code, _ := b.get(t, "/readyz")
		_, m := b.get(t, "/metrics")
		return code == 200 && strings.Contains(m, standbySeries)
	})
	n = requests.Load()
	time.Sleep(window)
	two := requests.Load() - n
	t.Logf("polls of the cluster in %s: %d with one replica, %d with two", window, one, two)
	if two > one*3/2 { // both polling would be twice as many
		t.Errorf("two replicas polled %d times where one polled %d: the standby polls the broker", two, one)
	}

	_, am := a.get(t, "/metrics")
	_, bm := b.get(t, "/metrics")
	if !strings.Contains(am, lagSeries) || strings.Contains(am, "collector_standby{") {
		t.Errorf("the owner's /metrics: want its lag and no standby series")
	}
	if strings.Contains(bm, "queuewatch_kafka_consumergroup") || !strings.Contains(bm, standbySeries) {
		t.Errorf("the standby's /metrics export the owner's series (a second page) or not its standby state")
	}
	if _, page := b.get(t, "/"); !strings.Contains(page, `standby</span>`) {
		t.Error("the standby's pages do not say it stands by")
	}
	if _, src := b.get(t, "/api/v1/sources"); !strings.Contains(src, `"polled_by":"`) {
		t.Errorf("the standby's /api/v1/sources name no replica polling the cluster: %s", src)
	}
	if ga, gb := groupLags(t, a), groupLags(t, b); ga["prod/billing"] != 6 || gb["prod/billing"] != 6 {
		t.Errorf("the API's groups: owner %v, standby %v; want billing's lag 6 on both", ga, gb)
	}
	// billing has no members: both replicas date its stop from the
	// owner's first poll, the standby from the onset kept in the store.
	since := groupSince(t, a, "billing")
	if since == "" || groupSince(t, b, "billing") != since {
		t.Errorf("billing's status_since: owner %q, standby %q; want the same onset on both", since, groupSince(t, b, "billing"))
	}

	// The owner stops (a rolling update): it gives its lease up and the
	// standby polls at its next poll.
	a.stop()
	err := <-a.done
	a.done <- err // for start's cleanup
	stopped := time.Now()
	eventually(t, "the standby to poll the cluster itself", func() bool {
		_, m := b.get(t, "/metrics")
		return strings.Contains(m, lagSeries) && !strings.Contains(m, "collector_standby{")
	})
	t.Logf("the standby exported the lag %s after the owner stopped (poll interval 1s)", time.Since(stopped).Round(10*time.Millisecond))
	if got := groupSince(t, b, "billing"); got != since {
		t.Errorf("billing's status_since after the failover: %q; want the owner's %q", got, since)
	}
}

// groupSince is the status_since of group in cluster prod in r's API.
func groupSince(t *testing.T, r *running, group string) string {
	t.Helper()
	_, body := r.get(t, "/api/v1/groups/prod/"+group)
	var g struct {
		Status string `json:"status"`
		Since  string `json:"status_since"`
	}
	if err := json.Unmarshal([]byte(body), &g); err != nil {
		t.Fatalf("/api/v1/groups/prod/%s: %v\n%s", group, err, body)
	}
	return g.Since
}

// groupLags is /api/v1/groups as cluster/group → total lag.
func groupLags(t *testing.T, r *running) map[string]int64 {
	t.Helper()
	_, body := r.get(t, "/api/v1/groups")
	var groups struct {
		Groups []struct {
			Cluster string `json:"cluster"`
			Group   string `json:"group"`
			Lag     int64  `json:"lag"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(body), &groups); err != nil {
		t.Fatalf("/api/v1/groups: %v\n%s", err, body)
	}
	out := map[string]int64{}
	for _, g := range groups.Groups {
		out[g.Cluster+"/"+g.Group] = g.Lag
	}
	return out
}

// TestShardsWithStandbys runs the Helm chart's shards × replicaCount
// topology: two shards of two replicas each on one PostgreSQL store, over
// four kfake clusters. Each cluster is polled by one replica and stood by
// for by the other replica of its shard, while the other shard's replicas
// leave it alone; when a shard's owner stops, its standby takes over its
// clusters and the other shard is unchanged.
func TestShardsWithStandbys(t *testing.T) {
	clusters := shardedClusters(t, 4)
	dsn := testenv.Postgres(t).DSN
	const count = 2
	owned := map[int][]string{}
	for _, c := range clusters {
		i := config.Shard{Count: count}.Owner("kafka", c.Name)
		owned[i] = append(owned[i], c.Name)
	}
	if len(owned) != count {
		t.Fatalf("clusters per shard %v: the test needs every shard to own one", owned)
	}
	replica := func(shard int) *running {
		cfg := testConfig(t, clusters...)
		cfg.Audit.Driver, cfg.Audit.DSN = config.AuditPostgres, dsn
		cfg.Shard.Index, cfg.Shard.Count = shard, count
		return start(t, cfg)
	}
	lag := func(c string) string {
		return fmt.Sprintf(`queuewatch_kafka_consumergroup_topic_lag{cluster=%q,group="billing",topic="orders"}`, c)
	}
	standby := func(c string) string {
		return fmt.Sprintf(`queuewatch_collector_standby{broker="kafka",cluster=%q}`, c)
	}
	// exports reports whether every one of names is a series of r.
	exports := func(r *running, names ...string) bool {
		_, body := r.get(t, "/metrics")
		m := queuewatchSeries(t, body)
		for _, n := range names {
			if _, ok := m[n]; !ok {
				return false
			}
		}
		return true
	}
	mentions := func(r *running, cluster string) bool {
		_, body := r.get(t, "/metrics")
		return strings.Contains(body, fmt.Sprintf("cluster=%q", cluster))
	}

	var owners, standbys [count]*running
	for i := range count {
		owners[i] = replica(i)
		readyMetrics(t, owners[i], len(owned[i]))
	}
	for i := range count {
		standbys[i] = replica(i)
		var names []string
		for _, c := range owned[i] {
			names = append(names, standby(c))
		}
		eventually(t, fmt.Sprintf("shard %d's second replica to stand by for %v", i, owned[i]), func() bool {
			code, _ := standbys[i].get(t, "/readyz")
			return code == 200 && exports(standbys[i], names...)
		})
	}
	for i := range count {
		other := 1 - i
		for _, c := range owned[i] {
			if !exports(owners[i], lag(c)) || exports(owners[i], standby(c)) {
				t.Errorf("shard %d's owner does not export %s's lag, or stands by for it", i, c)
			}
			if exports(standbys[i], lag(c)) {
				t.Errorf("shard %d's standby exports %s's lag: the cluster is polled twice", i, c)
			}
			if mentions(owners[other], c) || mentions(standbys[other], c) {
				t.Errorf("a replica of shard %d exports a series of %s, which shard %d polls", other, c, i)
			}
		}
	}

	// Shard 0's owner stops: its standby polls shard 0's clusters; shard
	// 1 goes on as it was.
	owners[0].stop()
	err := <-owners[0].done
	owners[0].done <- err // for start's cleanup
	var lags []string
	for _, c := range owned[0] {
		lags = append(lags, lag(c))
	}
	eventually(t, "shard 0's standby to poll its clusters", func() bool {
		_, body := standbys[0].get(t, "/metrics")
		return exports(standbys[0], lags...) && !strings.Contains(body, "queuewatch_collector_standby{")
	})
	for _, c := range owned[0] {
		if mentions(owners[1], c) || mentions(standbys[1], c) {
			t.Errorf("shard 1 took %s over from shard 0", c)
		}
	}
	for _, c := range owned[1] {
		if !exports(owners[1], lag(c)) || !exports(standbys[1], standby(c)) {
			t.Errorf("shard 1 changed when shard 0's owner stopped: %s", c)
		}
	}
}
