package demo

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// testSpeed makes a simulated minute pass in six seconds.
const testSpeed = 10

// wait bounds every "eventually" in these tests.
const wait = 10 * time.Second

func TestDemo(t *testing.T) {
	baseline := runtime.NumGoroutine()
	ctx := t.Context()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	d, err := Start(ctx, Options{Logger: log, Speed: testSpeed})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	closed := false
	defer func() {
		if !closed {
			d.Close()
		}
	}()
	if got := len(d.Brokers()); got != 3 {
		t.Fatalf("Brokers() has %d addresses, want 3", got)
	}
	adm := newTestAdmin(t, d)

	t.Run("topics", func(t *testing.T) { testTopics(t, adm) })
	t.Run("healthy groups keep up", func(t *testing.T) { testHealthy(t, adm) })
	t.Run("analytics-slow lag grows", func(t *testing.T) { testAnalyticsSlow(t, adm) })
	t.Run("billing-stopped is empty with lag", func(t *testing.T) { testBillingStopped(t, adm) })
	t.Run("inventory-stalled keeps members but not progress", func(t *testing.T) { testInventoryStalled(t, adm) })
	t.Run("shipping-848 is a KIP-848 group with members", func(t *testing.T) { testShipping848(t, adm) })
	t.Run("ledger has transactions", func(t *testing.T) { testLedger(t, adm) })
	t.Run("orders.DLT carries Spring headers", func(t *testing.T) { testOrdersDLT(t, d) })
	t.Run("payments.DLQ carries Connect headers", func(t *testing.T) { testPaymentsDLQ(t, d) })
	t.Run("dead letters keep arriving", func(t *testing.T) { testDeadLettersGrow(t, adm) })
	t.Run("all groups and no cursor group", func(t *testing.T) {
		groups, err := adm.ListGroups(ctx)
		if err != nil {
			t.Fatalf("list groups: %v", err)
		}
		for _, g := range Groups() {
			if _, ok := groups[g]; !ok {
				t.Errorf("group %s missing", g)
			}
		}
		if _, ok := groups["queuewatch-dlq"]; ok {
			t.Error("demo created queuewatch's cursor group queuewatch-dlq")
		}
	})

	adm.Close()
	start := time.Now()
	d.Close()
	closed = true
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Close took %v, want under 5s", took)
	}
	d.Close() // Idempotent: must neither block nor panic.
	assertGoroutinesBack(t, baseline)
}

func newTestAdmin(t *testing.T, d *Demo) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.Brokers()...))
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	return kadm.NewClient(cl)
}

func testTopics(t *testing.T, adm *kadm.Client) {
	details, err := adm.ListTopics(t.Context())
	if err != nil {
		t.Fatalf("list topics: %v", err)
	}
	for topic, want := range Partitions() {
		t.Run(topic, func(t *testing.T) {
			td, ok := details[topic]
			if !ok {
				t.Fatalf("topic %s missing", topic)
			}
			if got := int32(len(td.Partitions)); got != want {
				t.Errorf("topic %s has %d partitions, want %d", topic, got, want)
			}
		})
	}
	want := map[string]int32{
		TopicOrders: 6, TopicPayments: 3, TopicEvents: 12, TopicInventory: 3,
		TopicLedger: 3, TopicOrdersDLT: 3, TopicPaymentsDLQ: 1,
	}
	if len(Partitions()) != len(want) {
		t.Errorf("Partitions() has %d topics, want %d", len(Partitions()), len(want))
	}
	for topic, n := range want {
		if Partitions()[topic] != n {
			t.Errorf("Partitions()[%s] = %d, want %d", topic, Partitions()[topic], n)
		}
	}
}

// groupLag describes one group with its lag.
func groupLag(t *testing.T, adm *kadm.Client, group string) kadm.DescribedGroupLag {
	t.Helper()
	lags, err := adm.Lag(t.Context(), group)
	if err != nil {
		t.Fatalf("lag of %s: %v", group, err)
	}
	l, ok := lags[group]
	if !ok {
		t.Fatalf("group %s not described", group)
	}
	if err := l.Error(); err != nil {
		t.Fatalf("lag of %s: %v", group, err)
	}
	return l
}

// eventually retries check until it returns nil or wait passes.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true within %v: %v", what, wait, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func testHealthy(t *testing.T, adm *kadm.Client) {
	for _, group := range []string{GroupOrdersProcessor, GroupPaymentsSink} {
		t.Run(group, func(t *testing.T) {
			eventually(t, group+" stable and caught up", func() error {
				l := groupLag(t, adm, group)
				// A healthy consumer trails by at most a few commit
				// intervals of traffic, far below the seeded backlog.
				if l.State != "Stable" || len(l.Members) != 1 || l.Lag.Total() > 150 {
					return fmt.Errorf("state %s, %d members, lag %d", l.State, len(l.Members), l.Lag.Total())
				}
				return nil
			})
		})
	}
}

func testAnalyticsSlow(t *testing.T, adm *kadm.Client) {
	var first int64
	eventually(t, "analytics-slow committing with lag", func() error {
		l := groupLag(t, adm, GroupAnalyticsSlow)
		first = l.Lag.Total()
		if l.State != "Stable" || first <= 0 {
			return fmt.Errorf("state %s, lag %d", l.State, first)
		}
		for _, pl := range l.Lag.Sorted() {
			if pl.Commit.At >= 0 {
				return nil
			}
		}
		return fmt.Errorf("no commit yet")
	})
	eventually(t, "analytics-slow lag grows", func() error {
		if now := groupLag(t, adm, GroupAnalyticsSlow).Lag.Total(); now <= first {
			return fmt.Errorf("lag %d, was %d", now, first)
		}
		return nil
	})
}

func testBillingStopped(t *testing.T, adm *kadm.Client) {
	eventually(t, "billing-stopped empty with lag", func() error {
		l := groupLag(t, adm, GroupBillingStopped)
		if l.State != "Empty" || len(l.Members) != 0 || l.Lag.Total() <= 0 {
			return fmt.Errorf("state %s, %d members, lag %d", l.State, len(l.Members), l.Lag.Total())
		}
		var committed int64
		for _, pl := range l.Lag.Sorted() {
			committed += max(pl.Commit.At, 0)
		}
		if committed != inventoryBacklog/2 {
			return fmt.Errorf("committed %d records, want %d", committed, inventoryBacklog/2)
		}
		return nil
	})
}

func testInventoryStalled(t *testing.T, adm *kadm.Client) {
	var before kadm.OffsetResponses
	eventually(t, "inventory-stalled first commit on every partition", func() error {
		l := groupLag(t, adm, GroupInventoryStalled)
		if len(l.Members) == 0 {
			return fmt.Errorf("no members")
		}
		offs, err := adm.FetchOffsets(t.Context(), GroupInventoryStalled)
		if err != nil {
			return err
		}
		if n := len(offs[TopicInventory]); n != 3 {
			return fmt.Errorf("commits on %d partitions", n)
		}
		before = offs
		return nil
	})
	// A real second is ten commit intervals of a healthy group at testSpeed.
	time.Sleep(time.Second)
	l := groupLag(t, adm, GroupInventoryStalled)
	if len(l.Members) == 0 || l.State != "Stable" {
		t.Errorf("inventory-stalled: state %s with %d members, want Stable with members", l.State, len(l.Members))
	}
	if l.Lag.Total() <= 0 {
		t.Errorf("inventory-stalled lag %d, want > 0", l.Lag.Total())
	}
	after, err := adm.FetchOffsets(t.Context(), GroupInventoryStalled)
	if err != nil {
		t.Fatalf("fetch offsets: %v", err)
	}
	before.Each(func(o kadm.OffsetResponse) {
		a, ok := after.Lookup(o.Topic, o.Partition)
		if !ok || a.At != o.At {
			t.Errorf("%s/%d committed offset moved from %d to %d", o.Topic, o.Partition, o.At, a.At)
		}
	})
}

func testShipping848(t *testing.T, adm *kadm.Client) {
	eventually(t, "shipping-848 described with members and commits", func() error {
		groups, err := adm.DescribeConsumerGroups(t.Context(), GroupShipping848)
		if err != nil {
			return err
		}
		g, ok := groups[GroupShipping848]
		if !ok || g.Err != nil {
			return fmt.Errorf("not described: %w", g.Err)
		}
		if len(g.Members) < 1 {
			return fmt.Errorf("state %s, %d members", g.State, len(g.Members))
		}
		// kfake answers ConsumerGroupDescribe with topic IDs only, so kadm
		// files the assignment under an empty topic name: count partitions.
		assigned := 0
		for _, parts := range g.Members[0].Assignment {
			assigned += len(parts)
		}
		if assigned != 6 {
			return fmt.Errorf("member assigned %d partitions, want the 6 of orders", assigned)
		}
		if l := groupLag(t, adm, GroupShipping848); l.Lag.Total() > 150 {
			return fmt.Errorf("lag %d", l.Lag.Total())
		}
		return nil
	})
	// The classic describe must not be mistaken for the 848 one.
	listed, err := adm.ListGroups(t.Context())
	if err != nil {
		t.Fatalf("list groups: %v", err)
	}
	if typ := listed[GroupShipping848].GroupType; typ != "consumer" {
		t.Errorf("shipping-848 group type %q, want consumer", typ)
	}
	if typ := listed[GroupOrdersProcessor].GroupType; typ != "classic" {
		t.Errorf("orders-processor group type %q, want classic", typ)
	}
}

func testLedger(t *testing.T, adm *kadm.Client) {
	eventually(t, "ledger-reader consumes committed transactions", func() error {
		l := groupLag(t, adm, GroupLedgerReader)
		var committed int64
		for _, pl := range l.Lag.Sorted() {
			committed += max(pl.Commit.At, 0)
		}
		if l.State != "Stable" || committed == 0 {
			return fmt.Errorf("state %s, committed %d", l.State, committed)
		}
		return nil
	})
	eventually(t, "ledger-writer holds a transaction open", func() error {
		ends, err := adm.ListEndOffsets(t.Context(), TopicLedger)
		if err != nil {
			return err
		}
		stable, err := adm.ListCommittedOffsets(t.Context(), TopicLedger)
		if err != nil {
			return err
		}
		held := false
		stable.Each(func(o kadm.ListedOffset) {
			if end, ok := ends.Lookup(o.Topic, o.Partition); ok && o.Offset < end.Offset {
				held = true
			}
		})
		if !held {
			return fmt.Errorf("last stable offset equals the high watermark everywhere")
		}
		return nil
	})
	eventually(t, "ledger-writer has written transactions", func() error {
		producers, err := adm.DescribeProducers(t.Context(), kadm.TopicsSet{TopicLedger: nil})
		if err != nil {
			return err
		}
		n := 0
		producers.EachProducer(func(kadm.DescribedProducer) { n++ })
		if n == 0 {
			return fmt.Errorf("no producers on %s", TopicLedger)
		}
		return nil
	})
}

// deadLetter is one decoded dead letter and the original it points at.
type deadLetter struct {
	rec       *kgo.Record
	topic     string
	partition int32
	offset    int64
}

// readAll reads every record of topic up to its current end.
func readAll(t *testing.T, d *Demo, topic string) []*kgo.Record {
	t.Helper()
	adm := newTestAdmin(t, d)
	defer adm.Close()
	ends, err := adm.ListEndOffsets(t.Context(), topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	want := int64(0)
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.Brokers()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	var out []*kgo.Record
	for int64(len(out)) < want {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: got %d of %d records: %v", topic, len(out), want, ctx.Err())
		}
		out = append(out, fetches.Records()...)
	}
	return out
}

// originals indexes records by partition and offset.
func originals(records []*kgo.Record) map[[2]int64]*kgo.Record {
	m := make(map[[2]int64]*kgo.Record, len(records))
	for _, r := range records {
		m[[2]int64{int64(r.Partition), r.Offset}] = r
	}
	return m
}

func headerMap(r *kgo.Record) map[string][]byte {
	m := make(map[string][]byte, len(r.Headers))
	for _, h := range r.Headers {
		m[h.Key] = h.Value
	}
	return m
}

// checkOriginal asserts dl points at a real record with the same key and value.
func checkOriginal(t *testing.T, dl deadLetter, wantTopic string, orig map[[2]int64]*kgo.Record) *kgo.Record {
	t.Helper()
	if dl.topic != wantTopic {
		t.Errorf("original topic %q, want %q", dl.topic, wantTopic)
	}
	o, ok := orig[[2]int64{int64(dl.partition), dl.offset}]
	if !ok {
		t.Errorf("dead letter at %d points at %s/%d@%d, which does not exist", dl.rec.Offset, dl.topic, dl.partition, dl.offset)
		return nil
	}
	if string(o.Key) != string(dl.rec.Key) || string(o.Value) != string(dl.rec.Value) {
		t.Errorf("dead letter %q=%q differs from original %q=%q", dl.rec.Key, dl.rec.Value, o.Key, o.Value)
	}
	return o
}

func testOrdersDLT(t *testing.T, d *Demo) {
	dlt := readAll(t, d, TopicOrdersDLT)
	if len(dlt) < SeededDeadLetters {
		t.Fatalf("orders.DLT has %d records, want at least %d", len(dlt), SeededDeadLetters)
	}
	orig := originals(readAll(t, d, TopicOrders))
	oldest := time.Now()
	classes := map[string]int{}
	for _, r := range dlt {
		h := headerMap(r)
		for _, key := range []string{"kafka_dlt-exception-message", "kafka_dlt-exception-stacktrace"} {
			if len(h[key]) == 0 {
				t.Errorf("dead letter %d: header %s empty", r.Offset, key)
			}
		}
		if len(h["kafka_dlt-original-partition"]) != 4 || len(h["kafka_dlt-original-offset"]) != 8 ||
			len(h["kafka_dlt-original-timestamp"]) != 8 {
			t.Fatalf("dead letter %d: binary headers have wrong sizes: %v", r.Offset, h)
		}
		dl := deadLetter{
			rec:       r,
			topic:     string(h["kafka_dlt-original-topic"]),
			partition: int32(binary.BigEndian.Uint32(h["kafka_dlt-original-partition"])),
			offset:    int64(binary.BigEndian.Uint64(h["kafka_dlt-original-offset"])),
		}
		o := checkOriginal(t, dl, TopicOrders, orig)
		if o != nil {
			if ts := int64(binary.BigEndian.Uint64(h["kafka_dlt-original-timestamp"])); ts != o.Timestamp.UnixMilli() {
				t.Errorf("original timestamp header %d, record has %d", ts, o.Timestamp.UnixMilli())
			}
		}
		class := string(h["kafka_dlt-exception-cause-fqcn"])
		classes[class]++
		if !strings.Contains(string(h["kafka_dlt-exception-stacktrace"]), class) {
			t.Errorf("stack trace does not mention %s", class)
		}
		if r.Timestamp.Before(oldest) {
			oldest = r.Timestamp
		}
	}
	for _, want := range []string{"java.lang.IllegalStateException", "com.fasterxml.jackson.core.JsonParseException"} {
		if classes[want] == 0 {
			t.Errorf("no dead letter with exception %s; got %v", want, classes)
		}
	}
	if len(classes) != 2 {
		t.Errorf("unexpected exception classes %v", classes)
	}
	if age := time.Since(oldest); age < 30*time.Minute {
		t.Errorf("oldest dead letter is %v old, want seeded history spread over the last hour", age)
	}
}

func testPaymentsDLQ(t *testing.T, d *Demo) {
	dlq := readAll(t, d, TopicPaymentsDLQ)
	if len(dlq) < SeededDeadLetters {
		t.Fatalf("payments.DLQ has %d records, want at least %d", len(dlq), SeededDeadLetters)
	}
	orig := originals(readAll(t, d, TopicPayments))
	want := map[string]string{
		"__connect.errors.connector.name":       PaymentsConnectorName,
		"__connect.errors.task.id":              "0",
		"__connect.errors.stage":                "VALUE_CONVERTER",
		"__connect.errors.class.name":           "org.apache.kafka.connect.json.JsonConverter",
		"__connect.errors.exception.class.name": "org.apache.kafka.connect.errors.DataException",
	}
	for _, r := range dlq {
		h := headerMap(r)
		for k, v := range want {
			if string(h[k]) != v {
				t.Errorf("dead letter %d: header %s = %q, want %q", r.Offset, k, h[k], v)
			}
		}
		for _, k := range []string{"__connect.errors.exception.message", "__connect.errors.exception.stacktrace"} {
			if len(h[k]) == 0 {
				t.Errorf("dead letter %d: header %s empty", r.Offset, k)
			}
		}
		p, perr := strconv.ParseInt(string(h["__connect.errors.partition"]), 10, 32)
		off, oerr := strconv.ParseInt(string(h["__connect.errors.offset"]), 10, 64)
		if perr != nil || oerr != nil {
			t.Fatalf("dead letter %d: partition/offset not decimal strings: %q %q", r.Offset,
				h["__connect.errors.partition"], h["__connect.errors.offset"])
		}
		checkOriginal(t, deadLetter{rec: r, topic: string(h["__connect.errors.topic"]), partition: int32(p), offset: off},
			TopicPayments, orig)
	}
}

func testDeadLettersGrow(t *testing.T, adm *kadm.Client) {
	for _, topic := range []string{TopicOrdersDLT, TopicPaymentsDLQ} {
		t.Run(topic, func(t *testing.T) {
			eventually(t, topic+" grows past the seeded dead letters", func() error {
				ends, err := adm.ListEndOffsets(t.Context(), topic)
				if err != nil {
					return err
				}
				var n int64
				ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
				if n <= SeededDeadLetters {
					return fmt.Errorf("%d dead letters", n)
				}
				return nil
			})
		})
	}
}

// assertGoroutinesBack waits for the goroutine count to return to about
// where it was before Start: every service, client and broker goroutine must
// have exited.
func assertGoroutinesBack(t *testing.T, baseline int) {
	t.Helper()
	const slack = 3 // Test runner and timer goroutines come and go.
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= baseline+slack {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines after Close, %d before Start:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestStartRejectsWrongPortCount(t *testing.T) {
	for _, ports := range [][]int{{0}, {0, 0}, {0, 0, 0, 0}} {
		t.Run(fmt.Sprint(len(ports)), func(t *testing.T) {
			if d, err := Start(t.Context(), Options{Ports: ports}); err == nil {
				d.Close()
				t.Fatalf("Start with %d ports succeeded, want an error", len(ports))
			}
		})
	}
}

func TestStartOnGivenPortsAndStopOnCancel(t *testing.T) {
	ports := freePorts(t, 3)
	ctx, cancel := context.WithCancel(t.Context())
	d, err := Start(ctx, Options{Ports: ports, Speed: testSpeed})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer d.Close()
	for i, addr := range d.Brokers() {
		if want := fmt.Sprintf("127.0.0.1:%d", ports[i]); addr != want {
			t.Errorf("broker %d at %s, want %s", i, addr, want)
		}
	}
	cancel()
	stopped := make(chan struct{})
	go func() {
		d.wg.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("services still running 5s after the Start context was cancelled")
	}
}

// freePorts finds n ports nothing listens on by letting the kernel pick them.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("listen: %v", err)
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		defer ln.Close()
	}
	return ports
}
