package rabbitmq

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// pluginSource watches vh through the management API and, through a proxy
// the test can stop, the shared broker's rabbitmq_prometheus.
func pluginSource(t *testing.T, vh string, listEvery int) (s *Source, requests func() (listings, scrapes int64), stop, start func()) {
	t.Helper()
	pp := newProxy(t, "prometheus", "127.0.0.1:15692")
	s = newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL, PrometheusURL: "http://" + pp.Listen},
		Options{VHosts: []string{vh}, ListEvery: listEvery, DLQNamePattern: testNamePattern})
	var lastL, lastS int64
	delta := func() (int64, int64) {
		l, sc := s.mgmt.Requests(), s.exporter.Requests()
		dl, ds := l-lastL, sc-lastS
		lastL, lastS = l, sc
		return dl, ds
	}
	return s, delta, pp.Stop, func() {
		if err := pp.Start(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDepthsFromThePluginBetweenListings: with rabbitmq_prometheus
// answering, a poll lists the queues through the management API every
// third poll (ListEvery 3) and when a queue appears; the polls between
// read only the plugin, yet show new messages, the DLQ's exact depth (over
// AMQP) with its sources from the listing's DLX policy, and no partial
// data.
func TestDepthsFromThePluginBetweenListings(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("plugin")
	ch := channel(t, vh)
	a.exchange(vh, "dlx", "fanout", nil)
	a.queue(vh, "orders", nil)
	a.queue(vh, "orders.dead", nil)
	a.queue(vh, "audit", map[string]any{"x-queue-type": "quorum"})
	a.bind(vh, "dlx", "orders.dead", "")
	a.policy(vh, "dead-letters", "^orders$", map[string]any{"dead-letter-exchange": "dlx"})
	a.waitPolicy(vh, "orders", "dead-letters")
	s, requests, _, _ := pluginSource(t, vh, 3)

	snap := poll(t, s)
	if l, sc := requests(); l == 0 || sc != 1 {
		t.Fatalf("first poll: %d management requests and %d scrapes, want a listing and a scrape", l, sc)
	}
	d := mustDLQ(t, snap, vh, "orders.dead")
	if d.Detection != queue.DetectedTopology || !slices.Equal(d.Sources, []string{"orders"}) {
		t.Fatalf("orders.dead: %s from %v, want topology from orders", d.Detection, d.Sources)
	}

	for range 3 {
		publish(t, ch, "", "audit", text("a"))
	}
	for range 2 {
		publish(t, ch, "", "orders", text("x"))
		a.rejectOne(vh, "orders")
	}
	waitDepth(t, ch, "orders.dead", 2)
	// The plugin shows a queue's statistics as the queue emits them,
	// every few seconds: poll until it shows the three messages, as a user
	// waits for the next refresh.
	var audit queue.Queue
	for deadline := time.Now().Add(30 * time.Second); ; {
		snap = poll(t, s)
		if l, sc := requests(); sc != 1 || l != 0 && s.plugin.sinceList != 0 {
			t.Fatalf("%d management requests and %d scrapes at %d polls since the listing", l, sc, s.plugin.sinceList)
		}
		audit, _ = findQueue(snap, vh, "audit")
		if audit.Ready == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit: %d ready, want 3", audit.Ready)
		}
	}
	if audit.Type != "quorum" || len(snap.Partial) != 0 {
		t.Errorf("audit is %q, partial %v; want quorum and no partial data", audit.Type, snap.Partial)
	}
	// The DLQ's depth is exact at once: it is measured over AMQP.
	if d := mustDLQ(t, snap, vh, "orders.dead"); d.Messages != 2 || d.Err != "" || !slices.Equal(d.Sources, []string{"orders"}) {
		t.Errorf("orders.dead: %d messages from %v (err %q), want 2 from orders", d.Messages, d.Sources, d.Err)
	}

	// Polls between listings carry the listing's counters with its time.
	for s.plugin.sinceList == 0 {
		snap = poll(t, s)
	}
	q, _ := findQueue(snap, vh, "orders")
	if q.CountersAt.IsZero() || !q.CountersAt.Before(snap.Time) {
		t.Errorf("orders: counters at %v, poll at %v: want the earlier listing's time", q.CountersAt, snap.Time)
	}

	// A new queue is listed at the next poll, whenever the listing is due.
	a.queue(vh, "payments.dlq", nil)
	for deadline := time.Now().Add(30 * time.Second); ; {
		snap = poll(t, s)
		if _, ok := findDLQ(snap, vh, "payments.dlq"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("payments.dlq never listed")
		}
	}
	requests()
	if s.plugin.sinceList != 0 {
		t.Errorf("the poll that found payments.dlq was not a listing")
	}
}

// TestPluginFailureFallsBackToListing: when rabbitmq_prometheus stops
// answering, the next poll lists through the management API with nothing
// missing, and so does every poll until the plugin is tried again after
// ListEvery listings; then it serves again, with listings as due.
func TestPluginFailureFallsBackToListing(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("plugin-down")
	ch := channel(t, vh)
	a.queue(vh, "work", nil)
	a.queue(vh, "work.dlq", nil)
	publish(t, ch, "", "work.dlq", text("x"))
	s, requests, stop, start := pluginSource(t, vh, 2)
	check := func(when string, wantListing, wantScrape bool) {
		t.Helper()
		snap := poll(t, s)
		l, sc := requests()
		if (l > 0) != wantListing || (sc > 0) != wantScrape {
			t.Errorf("%s: %d management requests, %d scrapes; want listing %v, scrape %v", when, l, sc, wantListing, wantScrape)
		}
		if d := mustDLQ(t, snap, vh, "work.dlq"); d.Messages != 1 || len(snap.Partial) != 0 {
			t.Errorf("%s: work.dlq %d messages, partial %v; want 1 and none", when, d.Messages, snap.Partial)
		}
		if _, ok := findQueue(snap, vh, "work"); !ok {
			t.Errorf("%s: queue work missing", when)
		}
	}
	check("first poll", true, true)
	// Until the plugin shows both queues, polls list again.
	for deadline := time.Now().Add(30 * time.Second); s.plugin.sinceList == 0; {
		poll(t, s)
		if time.Now().After(deadline) {
			t.Fatal("the plugin never served a poll")
		}
	}
	requests()
	check("listing due", true, true)
	stop()
	check("plugin down", true, true) // the failed scrape counts
	check("plugin down, not retried", true, false)
	start()
	check("retried after two listings", false, true)
	check("listing due", true, true)
}

// TestPluginThatCannotSeeEveryQueue: a cluster's queues may run on
// several nodes, and one node's plugin shows only its own; a poll then
// lists through the management API, with every queue's numbers, and the
// plugin is asked again only after ListEvery listings.
func TestPluginThatCannotSeeEveryQueue(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("plugin-node")
	a.queue(vh, "work", nil)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// Another node's answer: none of this vhost's queues.
		_, _ = w.Write([]byte("rabbitmq_identity_info{rabbitmq_node=\"rabbit@other\"} 1\n"))
	}))
	t.Cleanup(other.Close)
	s := newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL, PrometheusURL: other.URL},
		Options{VHosts: []string{vh}, ListEvery: 2})
	for i := range 3 {
		before := s.mgmt.Requests()
		snap := poll(t, s)
		if _, ok := findQueue(snap, vh, "work"); !ok || len(snap.Partial) != 0 {
			t.Fatalf("poll %d: work found %v, partial %v", i, ok, snap.Partial)
		}
		if s.mgmt.Requests() == before {
			t.Fatalf("poll %d read no listing", i)
		}
	}
	// Asked once, then set aside for ListEvery listings.
	if n := s.exporter.Requests(); n != 1 {
		t.Errorf("%d scrapes in 3 polls, want 1", n)
	}
}

// TestMergeDepths: the plugin's numbers replace the listing's; a head
// timestamp stays only while nothing left the queue; what the listing
// found missing stays partial; a queue on another node or a changed set of
// queues refuses the merge.
func TestMergeDepths(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	none, one := 0, 1
	ts := 1700000000.0
	last := &view{
		queues: []rabbit.Queue{
			{Name: "a", VHost: "v", Node: "rabbit@n1", Ready: n(5), Consumers: &none, HeadTimestamp: &ts},
			{Name: "b", VHost: "v", Node: "rabbit@n1", Ready: n(5), Consumers: &none, HeadTimestamp: &ts},
			{Name: "c", VHost: "v", Node: "rabbit@n1", Ready: n(5), Consumers: &one, HeadTimestamp: &ts},
		},
		listedAt: time.Unix(100, 0),
		partial:  []string{`vhost "gone": not found`},
	}
	got, why := mergeDepths(last, depths("rabbit@n1", map[string][3]int64{"a": {7, 1, 0}, "b": {4, 0, 0}, "c": {5, 0, 1}}))
	if got == nil {
		t.Fatal(why)
	}
	a, b, c := got.queues[0], got.queues[1], got.queues[2]
	if *a.Ready != 7 || *a.Unacked != 1 || *a.Consumers != 0 || a.HeadTimestamp == nil {
		t.Errorf("a: %d/%d/%d head %v; want 7/1/0 with the listing's head", *a.Ready, *a.Unacked, *a.Consumers, a.HeadTimestamp)
	}
	if *b.Ready != 4 || b.HeadTimestamp != nil {
		t.Errorf("b: %d ready, head %v; want 4 and no head (a message left)", *b.Ready, b.HeadTimestamp)
	}
	if *c.Ready != 5 || c.HeadTimestamp != nil {
		t.Errorf("c: %d ready, head %v; want 5 and no head (a consumer may have taken it)", *c.Ready, c.HeadTimestamp)
	}
	if !slices.Equal(got.partial, last.partial) {
		t.Errorf("partial %q, want the listing's %q", got.partial, last.partial)
	}
	if *last.queues[0].Ready != 5 || !got.listedAt.Equal(last.listedAt) {
		t.Errorf("the listing changed (%d ready) or the counters' time moved (%v)", *last.queues[0].Ready, got.listedAt)
	}
	if v, why := mergeDepths(last, depths("rabbit@n1", map[string][3]int64{"a": {}})); v != nil || why != errSetChanged {
		t.Errorf("a queue gone: %q", why)
	}
	if v, why := mergeDepths(last, depths("rabbit@n2", map[string][3]int64{"a": {}, "b": {}})); v != nil || !strings.Contains(why, "rabbit@n2") {
		t.Errorf("another node: %q", why)
	}
}

func depths(node string, qs map[string][3]int64) *rabbit.Depths {
	d := &rabbit.Depths{Node: node, Queues: map[rabbit.QueueKey]rabbit.Depth{}}
	for name, v := range qs {
		d.Queues[rabbit.QueueKey{VHost: "v", Name: name}] = rabbit.Depth{Ready: v[0], Unacked: v[1], Consumers: int(v[2])}
	}
	return d
}

// TestManagementDownWhileThePluginServes: polls between listings do not
// need the management API; when a due listing fails, every
// queue keeps its depths from rabbitmq_prometheus (with the last listing's
// types, policies and counters) and the DLQ its exact depth, marked
// partial; once the API answers again, the next poll lists.
func TestManagementDownWhileThePluginServes(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("plugin-mgmt-down")
	ch := channel(t, vh)
	a.queue(vh, "work", nil)
	a.queue(vh, "work.dlq", nil)
	mp := newProxy(t, "management", "127.0.0.1:15672")
	s := newSource(t, config.RabbitMQ{ManagementURL: "http://" + mp.Listen},
		Options{VHosts: []string{vh}, ListEvery: 2, DLQNamePattern: testNamePattern})
	if snap := poll(t, s); len(snap.Partial) != 0 || s.plugin.last == nil {
		t.Fatalf("first poll: partial %v", snap.Partial)
	}
	mp.Stop()
	// The next poll needs no listing: nothing shows the API is down.
	if snap := poll(t, s); len(snap.Partial) != 0 {
		t.Fatalf("a poll between listings: partial %v", snap.Partial)
	}
	publish(t, ch, "", "work.dlq", text("x"))
	for range 2 {
		publish(t, ch, "", "work", text("w"))
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		snap := poll(t, s)
		if !slices.ContainsFunc(snap.Partial, func(p string) bool { return strings.Contains(p, "management API unavailable") }) {
			t.Fatalf("partial %v, want the management API unavailable", snap.Partial)
		}
		// The DLQ's exact depth comes over AMQP, not the management API; a
		// loaded machine may still be reading the last poll's ("previous
		// amqp operation still running"), which the next poll reads again.
		// The plugin shows the queue's next statistics within seconds.
		d := mustDLQ(t, snap, vh, "work.dlq")
		q, ok := findQueue(snap, vh, "work")
		if d.Messages == 1 && d.Err == "" && ok && q.Ready == 2 {
			break
		}
		if d.Err == "" && d.Messages != 1 {
			t.Fatalf("work.dlq: %d messages, want the exact 1", d.Messages)
		}
		if time.Now().After(deadline) {
			t.Fatalf("work.dlq %d messages (err %q), work %+v: never the exact DLQ depth and 2 ready from the plugin", d.Messages, d.Err, q)
		}
	}
	if err := mp.Start(); err != nil {
		t.Fatal(err)
	}
	before := s.mgmt.Requests()
	if snap := poll(t, s); len(snap.Partial) != 0 || s.mgmt.Requests() == before {
		t.Errorf("management back: partial %v, %d requests; want a listing", snap.Partial, s.mgmt.Requests()-before)
	}
}
