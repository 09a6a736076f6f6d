package kafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/queuewatch/queuewatch/collectors"
	collector "github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// RunKilledAndBack kills the whole cluster while queuewatch polls it and
// starts it again: polls fail and queuewatch_collector_up goes to 0 while
// it is down, and the same source (no restart of queuewatch) reads the same
// lag once it serves again, with collector_up back at 1 and exactly the
// group's series exported, none left over from before. It stops c, so it
// must not share c with cases running in parallel.
func RunKilledAndBack(t *testing.T, c Cluster) {
	e := newEnv(t, c)
	topic := e.topic(1, nil)
	e.produce(topic, 0, 4, time.Now())
	g := testenv.Unique("g")
	e.commit(g, topic, map[int32]int64{0: 1})
	// The admin client would otherwise keep dialling the dead brokers.
	e.cl.Close()
	src := e.source(collector.Options{}, g)
	col := collectors.New([]collectors.Source{src}, collectors.Options{Interval: time.Minute, Timeout: 3 * time.Second})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(col)
	col.PollOnce(context.Background())
	if m := gather(t, reg); m.up != 1 || m.lag[g] != 3 {
		t.Fatalf("before the crash: up %v, lag %v; want 1 and %s at 3", m.up, m.lag, g)
	}

	c.Kill(t)
	col.PollOnce(context.Background())
	m := gather(t, reg)
	if m.up != 0 {
		t.Fatalf("collector_up %v while the cluster is down; want 0", m.up)
	}
	if st := col.Statuses()[0]; st.Up || st.LastError == "" {
		t.Errorf("status while down: %+v; want down with the poll's error", st)
	}

	c.Restart(t)
	deadline := time.Now().Add(90 * time.Second)
	for {
		col.PollOnce(context.Background())
		m = gather(t, reg)
		snaps := col.Snapshots()
		if m.up == 1 && len(snaps) == 1 {
			if got, ok := snaps[0].Group(g); ok && got.TotalLag() == 3 && got.Err == "" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("did not recover after restart: up %v, last error %q", m.up, col.Statuses()[0].LastError)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// One lag series, of the one partition, and one info series: nothing
	// kept from before the crash beside what is current.
	if len(m.lag) != 1 || m.lag[g] != 3 || m.lagSeries != 1 || m.infoSeries != 1 {
		t.Errorf("after recovery: lag %v over %d series, %d info series; want %s at 3 in one series, one info series",
			m.lag, m.lagSeries, m.infoSeries, g)
	}
}

// exported is what a scrape shows of one Kafka source.
type exported struct {
	up                    float64
	lag                   map[string]float64 // summed per group
	lagSeries, infoSeries int
}

func gather(t *testing.T, reg prometheus.Gatherer) exported {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := exported{up: -1, lag: map[string]float64{}}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "queuewatch_collector_up":
			if len(mf.GetMetric()) != 1 {
				t.Fatalf("%d collector_up series; want 1", len(mf.GetMetric()))
			}
			out.up = mf.GetMetric()[0].GetGauge().GetValue()
		case "queuewatch_kafka_consumergroup_lag":
			for _, m := range mf.GetMetric() {
				out.lag[label(m, "group")] += m.GetGauge().GetValue()
				out.lagSeries++
			}
		case "queuewatch_kafka_consumergroup_info":
			out.infoSeries = len(mf.GetMetric())
		}
	}
	if out.up < 0 {
		t.Fatal("no queuewatch_collector_up series")
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Failover is a cluster of several brokers that can be killed one at a
// time.
type Failover interface {
	Cluster
	// KillBroker kills one broker with SIGKILL; RestartBroker starts it
	// again on the same ports and data and returns once it serves.
	KillBroker(t *testing.T, id int32)
	RestartBroker(t *testing.T, id int32)
}

// RunLeaderKilled kills the broker leading a watched partition, three
// replicas each, while queuewatch polls: every poll that succeeds shows
// each partition it reports at its exact lag (never a guess from a dead
// leader), collector_up stays 1 or comes back to 1 without a restart of
// queuewatch, and once the partitions have new leaders the group is
// complete again with exactly its series exported. The killed broker is
// restarted at the end and the lag read again.
func RunLeaderKilled(t *testing.T, c Failover) {
	e := newEnv(t, c)
	topic := e.topic(3, nil)
	for p := range int32(3) {
		e.produce(topic, p, 10, time.Now())
	}
	g := testenv.Unique("failover")
	e.commit(g, topic, map[int32]int64{0: 4, 1: 10, 2: 0})
	want := map[int32]int64{0: 6, 1: 0, 2: 10}
	src := e.source(collector.Options{}, g)
	col := collectors.New([]collectors.Source{src}, collectors.Options{Interval: time.Minute, Timeout: 10 * time.Second})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(col)
	col.PollOnce(context.Background())
	if m := gather(t, reg); m.up != 1 || m.lag[g] != 16 {
		t.Fatalf("before the kill: up %v, lag %v; want 1 and %s at 16", m.up, m.lag, g)
	}

	md, err := e.adm.Metadata(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	leader := md.Topics[topic].Partitions[0].Leader
	killed := time.Now()
	c.KillBroker(t, leader)
	// Whatever fails below, the cluster is left whole (a restart of a
	// running broker does nothing).
	t.Cleanup(func() { c.RestartBroker(t, leader) })
	t.Logf("killed broker %d, leader of %s/0", leader, topic)

	var polls, failed int
	deadline := time.Now().Add(2 * time.Minute)
	for {
		col.PollOnce(context.Background())
		polls++
		st := col.Statuses()[0]
		if !st.Up {
			failed++
		} else if got, ok := col.Snapshots()[0].Group(g); ok {
			for _, pl := range got.Partitions {
				if pl.Lag != want[pl.Partition] {
					t.Errorf("poll %d: %s/%d lag %d; want %d", polls, pl.Topic, pl.Partition, pl.Lag, want[pl.Partition])
				}
			}
			if got.Err == "" && len(got.Partitions) == 3 && len(col.Snapshots()[0].Partial) == 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no complete poll within 2 minutes of the kill: %+v", st)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("complete again %s after the kill, after %d polls, %d of them failed", time.Since(killed).Round(time.Millisecond), polls, failed)
	m := gather(t, reg)
	if m.up != 1 || m.lag[g] != 16 || m.lagSeries != 3 || m.infoSeries != 1 {
		t.Errorf("after failover: up %v, lag %v over %d series, %d info series; want 1, %s at 16 over 3 series, 1 info series",
			m.up, m.lag, m.lagSeries, m.infoSeries, g)
	}

	c.RestartBroker(t, leader)
	col.PollOnce(context.Background())
	if m := gather(t, reg); m.up != 1 || m.lag[g] != 16 || m.lagSeries != 3 {
		t.Errorf("after the broker's restart: up %v, lag %v over %d series; want 1 and %s at 16 over 3", m.up, m.lag, m.lagSeries, g)
	}
}
