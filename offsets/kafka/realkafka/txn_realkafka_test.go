package realkafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
	offsetskafka "github.com/queuewatch/queuewatch/offsets/kafka"
)

// txnEnv is a topic of one partition written by transactions, one record a
// minute from base:
//
//	offsets 0 1 2  committed  (base+0m, +1m, +2m)
//	offset  3      commit marker (the broker's clock: now)
//	offsets 4 5    aborted    (base+3m, +4m)
//	offset  6      abort marker
//	offsets 7 8    committed  (base+5m, +6m)
//	offset  9      commit marker; the log ends at 10
//
// and group g committed at 2.
func newTxnEnv(t *testing.T, version string) *env {
	t.Helper()
	e := &env{
		t: t, node: testenv.RealKafkaAt(t, version), topic: testenv.Unique("txn"), g: testenv.Unique("g"),
		base: time.Now().Add(-2 * time.Hour).Truncate(time.Minute).UTC(),
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.node.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID(testenv.Unique("tx")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	e.adm = kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := e.adm.CreateTopic(ctx, 1, 1, nil, e.topic); err != nil {
		t.Fatal(err)
	}
	minute := 0
	txn := func(n int, end kgo.TransactionEndTry) {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for range n {
			rec := &kgo.Record{Topic: e.topic, Value: []byte("v"), Timestamp: e.base.Add(time.Duration(minute) * time.Minute)}
			minute++
			if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.EndTransaction(ctx, end); err != nil {
			t.Fatal(err)
		}
	}
	txn(3, kgo.TryCommit)
	txn(2, kgo.TryAbort)
	txn(2, kgo.TryCommit)
	// The coordinator writes the last commit marker after EndTransaction
	// returns: wait for it.
	for end := int64(0); end != 10; {
		ends, err := e.adm.ListEndOffsets(ctx, e.topic)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := ends.Lookup(e.topic, 0)
		if end = o.Offset; end != 10 && ctx.Err() != nil {
			t.Fatalf("log end %d, want 10 (7 records and 3 markers)", end)
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.commit(e.g, map[int32]int64{0: 2})
	return e
}

// resetsOf is the Resets of e's node, reading target records with the
// given options.
func (e *env) resetsOf(opts ...offsetskafka.Option) *offsetskafka.Resets {
	e.t.Helper()
	r, err := offsetskafka.New(testenv.KafkaCluster(e.t, "real", []string{e.node.Addr()}), opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(r.Close)
	return r
}

// TestTransactionalTopic plans each spec on a topic with committed and
// aborted transactions: the targets are kafka-consumer-groups --dry-run's
// (markers and aborted records count as offsets, as for Kafka itself), and
// the target record's timestamp is that of the first record the group's
// consumers will read: a marker is passed over, an aborted record too when
// the cluster reads read_committed; a target followed only by markers
// says so without waiting for the timestamp timeout.
func TestTransactionalTopic(t *testing.T) {
	for _, v := range testenv.KafkaVersions {
		t.Run("kafka-"+v, func(t *testing.T) { transactionalTopic(t, newTxnEnv(t, v)) })
	}
}

func transactionalTopic(t *testing.T, e *env) {
	uncommitted, committed := e.resetsOf(), e.resetsOf(offsetskafka.ReadCommitted())
	at := func(d time.Duration) string { return e.base.Add(d).Format("2006-01-02T15:04:05.000Z") }
	minute := func(n int) string { return e.base.Add(time.Duration(n) * time.Minute).Format(time.RFC3339) }
	const end = "end" // NoteEndOfLog
	for _, tc := range []struct {
		spec       string
		tool       []string
		target     int64
		uncommTS   string // the target record's timestamp, read_uncommitted
		committdTS string // read_committed
	}{
		{"earliest", []string{"--to-earliest"}, 0, minute(0), minute(0)},
		{"latest", []string{"--to-latest"}, 10, end, end},
		{"shift:+2", []string{"--shift-by", "2"}, 4, minute(3), minute(5)},
		{"shift:+100", []string{"--shift-by", "100"}, 10, end, end},
		{"offset:3", []string{"--to-offset", "3"}, 3, minute(3), minute(5)},
		{"offset:6", []string{"--to-offset", "6"}, 6, minute(5), minute(5)},
		{"offset:9", []string{"--to-offset", "9"}, 9, end, end},
		// Kafka's time index stamps a transaction marker with the broker's
		// clock (now, after every record's time): a time after record 2
		// finds the marker at 3, for the tool as for the plan, whatever
		// records follow it.
		{"timestamp:" + minute(3), []string{"--to-datetime", at(3 * time.Minute)}, 3, minute(3), minute(5)},
		{"timestamp:" + e.base.Add(4*time.Minute+30*time.Second).Format(time.RFC3339), []string{"--to-datetime", at(4*time.Minute + 30*time.Second)}, 3, minute(3), minute(5)},
		{"timestamp:" + minute(30), []string{"--to-datetime", at(30 * time.Minute)}, 3, minute(3), minute(5)},
		// After everything, markers too.
		{"timestamp:" + time.Now().Add(time.Hour).UTC().Format(time.RFC3339), []string{"--to-datetime", time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")}, 10, end, end},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			want := e.dryRun(append(tc.tool, "--topic", e.topic)...)
			tool, ok := want[e.topic+":0"]
			if !ok {
				t.Fatalf("kafka-consumer-groups printed %v", want)
			}
			for _, r := range []struct {
				name   string
				resets *offsetskafka.Resets
				ts     string
			}{{"read_uncommitted", uncommitted, tc.uncommTS}, {"read_committed", committed, tc.committdTS}} {
				e.resets = r.resets
				start := time.Now()
				p := e.plan(tc.spec, e.topic)
				took := time.Since(start)
				pp := p.Partitions[0]
				if pp.Target == nil || *pp.Target != tool {
					t.Errorf("%s: plan target %v, kafka-consumer-groups %d", r.name, pp.Target, tool)
					continue
				}
				if *pp.Target != tc.target {
					t.Errorf("%s: target %d, want %d (the data)", r.name, *pp.Target, tc.target)
				}
				got := pp.TimestampNote
				if pp.TargetTimestamp != nil {
					got = pp.TargetTimestamp.Format(time.RFC3339)
				} else if got == offsets.NoteEndOfLog {
					got = end
				}
				if got != r.ts {
					t.Errorf("%s: target %d's record timestamp %q, want %q", r.name, *pp.Target, got, r.ts)
				}
				// A target record older than the time asked is the marker's
				// doing, and the plan says so.
				older := pp.TargetTimestamp != nil && p.To.Kind == offsets.Timestamp && pp.TargetTimestamp.Before(p.To.Time)
				if older != strings.Contains(pp.Warning, "transaction marker") {
					t.Errorf("%s: target record at %s, warning %q", r.name, got, pp.Warning)
				}
				if took > offsets.TimestampTimeout {
					t.Errorf("%s: the plan took %s: it waited for a timestamp", r.name, took)
				}
			}
		})
	}
}
