package standby_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/collectors/standby"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// broker stands for one cluster's broker: it counts the polls that reach
// it and answers a group whose lag is the poll's number.
type broker struct {
	polls atomic.Int64
	down  atomic.Bool
}

func (b *broker) poll() *queue.Snapshot {
	n := b.polls.Add(1)
	return &queue.Snapshot{Broker: queue.Kafka, Cluster: "prod", Time: time.Now(), Groups: []queue.ConsumerGroup{{
		Cluster: "prod", Name: "billing", State: "Stable",
		Partitions: []queue.PartitionLag{{Topic: "orders", End: 100 + n, Committed: 100, Lag: n, HasCommit: true}},
	}}}
}

// source is one replica's source of the broker.
type source struct{ b *broker }

func (s source) Broker() queue.Broker { return queue.Kafka }
func (s source) Cluster() string      { return "prod" }
func (s source) Poll(context.Context) (*queue.Snapshot, error) {
	if s.b.down.Load() {
		return nil, errors.New("broker unreachable")
	}
	return s.b.poll(), nil
}

// replica is one queuewatch process's collector over the shared store.
type replica struct {
	col   *collectors.Collector
	src   *standby.Source
	store *store.Store
	stop  context.CancelFunc
	done  chan struct{}
}

// The TTL is ten intervals: the owner renews every third of it, each
// renewal bounded by a third, so on a loaded machine (2 cores, -race, the
// store on the same host) a renewal may be slow twice and still hold the
// lease; with three intervals one slow store call handed the source over
// in the middle of a test.
const (
	interval = 200 * time.Millisecond
	ttl      = 10 * interval
)

func startReplica(t *testing.T, dsn string, b *broker) *replica {
	t.Helper()
	auditStore, err := store.OpenPostgres(t.Context(), dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = auditStore.Close() })
	log := slog.New(slog.DiscardHandler)
	src := standby.Wrap(source{b}, auditStore, auditStore.Replica(), ttl, log)
	col := collectors.New([]collectors.Source{src}, collectors.Options{Interval: interval, History: time.Minute, Logger: log})
	ctx, cancel := context.WithCancel(t.Context())
	r := &replica{col: col, src: src, store: auditStore, stop: cancel, done: make(chan struct{})}
	go func() { defer close(r.done); col.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

func (r *replica) metrics(t *testing.T) string {
	t.Helper()
	rec := httptest.NewRecorder()
	r.col.Handler(prometheus.NewRegistry()).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// lag is the billing group's lag in r's latest snapshot and who polled it.
func (r *replica) lag() (int64, string, bool) {
	for _, s := range r.col.Snapshots() {
		for _, g := range s.Groups {
			return g.TotalLag(), s.PolledBy, true
		}
	}
	return 0, "", false
}

func waitFor(t *testing.T, what string, within time.Duration, ok func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !ok() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// TestTwoReplicasPollOnce: two replicas of one shard on a real PostgreSQL
// store poll the broker as often as one, the standby serves the owner's
// snapshots and exports none of its series, and when the owner stops
// (crashing: no release) the standby polls within the lease TTL.
func TestTwoReplicasPollOnce(t *testing.T) {
	dsn := testenv.Postgres(t).DSN
	b := &broker{}
	a := startReplica(t, dsn, b)
	waitFor(t, "a's first poll", 5*time.Second, func() bool { _, _, ok := a.lag(); return ok })
	s := startReplica(t, dsn, b)
	waitFor(t, "the standby's first snapshot", 5*time.Second, func() bool { _, _, ok := s.lag(); return ok })

	// For 10 intervals the broker sees one replica's polls.
	before := b.polls.Load()
	time.Sleep(10 * interval)
	// Two replicas polling would make some 20; a loaded machine may make
	// fewer than 10.
	if n := b.polls.Load() - before; n == 0 || n > 13 {
		t.Errorf("%d polls reached the broker in 10 intervals with two replicas; want one replica's 10", n)
	}
	lag, by, _ := s.lag()
	ownLag, ownBy, _ := a.lag()
	if by == "" || ownBy != "" {
		t.Errorf("polled by %q on the standby, %q on the owner; want the owner's id, then none", by, ownBy)
	}
	if lag < ownLag-1 || lag > ownLag {
		t.Errorf("the standby serves lag %d, the owner polled %d: more than one poll behind", lag, ownLag)
	}
	am, sm := a.metrics(t), s.metrics(t)
	if !strings.Contains(am, `queuewatch_kafka_consumergroup_lag{`) || !strings.Contains(am, `queuewatch_collector_up{broker="kafka",cluster="prod"} 1`) {
		t.Errorf("the owner's /metrics lack the group's lag or its up:\n%s", am)
	}
	if strings.Contains(sm, "consumergroup") || strings.Contains(sm, "queuewatch_collector_up{") ||
		!strings.Contains(sm, `queuewatch_collector_standby{broker="kafka",cluster="prod"} 1`) {
		t.Errorf("the standby's /metrics export the owner's series or not its standby state:\n%s", grep(sm, "queuewatch_"))
	}

	// The owner crashes: it stops polling and renewing (its connection to
	// the store goes with it) and keeps its lease until the TTL.
	a.stop()
	<-a.done
	_ = a.store.Close()
	crashed := time.Now()
	waitFor(t, "the standby to take over", 10*ttl, func() bool { _, by, _ := s.lag(); return by == "" })
	t.Logf("the standby polled %s after the owner's last poll (TTL %s, interval %s)", time.Since(crashed).Round(time.Millisecond), ttl, interval)
	// /metrics is rebuilt on the poller's goroutine right after the
	// snapshot is published (collectors.published), so for a moment the
	// snapshot is the new owner's and the exposition still the standby's.
	// Prometheus sees the takeover at its next scrape: wait for what it
	// would see.
	waitFor(t, "the new owner's /metrics", 5*time.Second, func() bool {
		sm := s.metrics(t)
		return strings.Contains(sm, `queuewatch_collector_up{broker="kafka",cluster="prod"} 1`) && !strings.Contains(sm, "collector_standby")
	})

	// A replica that stops cleanly gives its lease up: the next standby
	// takes over at its next poll, not after the TTL.
	c := startReplica(t, dsn, b)
	waitFor(t, "the new standby's first snapshot", 5*time.Second, func() bool { _, by, ok := c.lag(); return ok && by != "" })
	s.stop()
	<-s.done
	if err := s.src.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Released, the lease is free at once, TTL or not: a third holder
	// takes it (and gives it back).
	if got, err := s.store.LeasePoll(context.Background(), "kafka/prod", "probe", time.Now(), ttl); err != nil || got != "probe" {
		t.Fatalf("right after the release the lease went to %q (%v), want the first to ask", got, err)
	}
	if err := s.store.ReleasePoll(context.Background(), "kafka/prod", "probe"); err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	waitFor(t, "the standby to take a released lease", 10*ttl, func() bool { _, by, _ := c.lag(); return by == "" })
	t.Logf("after a release the standby polled %s later", time.Since(released).Round(time.Millisecond))
}

func grep(text, prefix string) string {
	var out []string
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestOwnerKeepsTheLeaseWhileTheBrokerIsDown: while the broker is down the
// owner's polls back off well past the lease TTL, yet it keeps the lease
// (renewed on its own timer): the owner exports the source down the whole
// time and the standby stays a standby, so the alert on collector_up
// fires from one replica, once; the standby shows the failure and then
// the recovery.
func TestOwnerKeepsTheLeaseWhileTheBrokerIsDown(t *testing.T) {
	dsn := testenv.Postgres(t).DSN
	b := &broker{}
	a := startReplica(t, dsn, b)
	waitFor(t, "a's first poll", 5*time.Second, func() bool { _, _, ok := a.lag(); return ok })
	s := startReplica(t, dsn, b)
	waitFor(t, "the standby's first snapshot", 5*time.Second, func() bool { _, by, ok := s.lag(); return ok && by != "" })

	b.down.Store(true)
	waitFor(t, "the owner to see the broker down", 5*time.Second, func() bool {
		return strings.Contains(a.metrics(t), `queuewatch_collector_up{broker="kafka",cluster="prod"} 0`)
	})
	// Backing off doubles the wait after each failure: 200, 400, 800,
	// 1600, 3200 ms… — past the 2 s TTL within 6 TTLs.
	for end := time.Now().Add(6 * ttl); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if am := a.metrics(t); !strings.Contains(am, `queuewatch_collector_up{broker="kafka",cluster="prod"} 0`) {
			t.Fatalf("while the broker is down the owner stopped exporting it down:\n%s", grep(am, "queuewatch_collector"))
		}
		if sm := s.metrics(t); strings.Contains(sm, "queuewatch_collector_up{") || !strings.Contains(sm, "collector_standby") {
			t.Fatalf("while the broker is down the standby took the source over:\n%s", grep(sm, "queuewatch_collector"))
		}
	}
	// The standby shows the owner's failure, not its last good data as up.
	if st := s.col.Statuses()[0]; st.Up || st.PolledBy == "" || !strings.Contains(st.LastError, "broker unreachable") {
		t.Errorf("the standby's status while the broker is down: %+v", st)
	}
	b.down.Store(false)
	// The owner's next poll comes when its backoff ends: after failures at
	// 0, 0.2, 0.6 … 12.6 s the next wait is 12.8 s, so on a loaded machine
	// the first poll after the recovery may be that far off.
	waitFor(t, "the owner to poll again", 30*time.Second, func() bool {
		return strings.Contains(a.metrics(t), `queuewatch_collector_up{broker="kafka",cluster="prod"} 1`)
	})
	// A standby does not back off from the owner's failures: it sees the
	// recovery within a few of its polls.
	waitFor(t, "the standby to show the recovery", 5*interval+time.Second, func() bool {
		st := s.col.Statuses()[0]
		return st.Up && st.PolledBy != ""
	})
}
