package rabbitmq

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

func TestDLQDetection(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("detect")

	a.exchange(vh, "dlx.direct", "direct", nil)
	a.exchange(vh, "dlx.topic", "topic", nil)
	a.exchange(vh, "dlx.fanout", "fanout", nil)
	a.exchange(vh, "work", "direct", nil)

	// Arguments, two sources into one DLQ.
	a.queue(vh, "a.src", map[string]any{"x-dead-letter-exchange": "dlx.direct", "x-dead-letter-routing-key": "a.dead"})
	a.queue(vh, "a.src2", map[string]any{"x-dead-letter-exchange": "dlx.direct", "x-dead-letter-routing-key": "a.dead"})
	a.queue(vh, "a.sink", nil)
	a.bind(vh, "dlx.direct", "a.sink", "a.dead")

	// A policy alone.
	a.queue(vh, "p.src", nil)
	a.queue(vh, "p.sink", nil)
	a.bind(vh, "dlx.direct", "p.sink", "p.dead")
	a.policy(vh, "p", `^p\.src$`, map[string]any{"dead-letter-exchange": "dlx.direct", "dead-letter-routing-key": "p.dead"})

	// Arguments override a policy; the broker resolves each key on its own,
	// so an argument's exchange combines with a policy's routing key.
	a.queue(vh, "o.src", map[string]any{"x-dead-letter-exchange": "dlx.direct", "x-dead-letter-routing-key": "o.args"})
	a.queue(vh, "o.argsink", nil)
	a.queue(vh, "o.policysink", nil)
	a.bind(vh, "dlx.direct", "o.argsink", "o.args")
	a.bind(vh, "dlx.direct", "o.policysink", "o.policy")
	a.bind(vh, "dlx.topic", "o.policysink", "o.#")
	a.policy(vh, "o", `^o\.src$`, map[string]any{"dead-letter-exchange": "dlx.topic", "dead-letter-routing-key": "o.policy"})
	a.queue(vh, "m.src", map[string]any{"x-dead-letter-exchange": "dlx.direct"})
	a.queue(vh, "m.sink", nil)
	a.bind(vh, "dlx.direct", "m.sink", "m.key")
	a.policy(vh, "m", `^m\.src$`, map[string]any{"dead-letter-exchange": "dlx.topic", "dead-letter-routing-key": "m.key"})

	// A custom routing key through a topic exchange.
	a.queue(vh, "t.src", map[string]any{"x-dead-letter-exchange": "dlx.topic", "x-dead-letter-routing-key": "dead.orders.payment"})
	a.queue(vh, "t.sink", nil)
	a.queue(vh, "t.other", nil)
	a.bind(vh, "dlx.topic", "t.sink", "dead.#")
	a.bind(vh, "dlx.topic", "t.other", "live.*")

	// Fanout: every bound queue.
	a.queue(vh, "f.src", map[string]any{"x-dead-letter-exchange": "dlx.fanout"})
	a.queue(vh, "f.sink1", nil)
	a.queue(vh, "f.sink2", nil)
	a.bind(vh, "dlx.fanout", "f.sink1", "")
	a.bind(vh, "dlx.fanout", "f.sink2", "ignored")

	// Default exchange: the queue named by the routing key.
	a.queue(vh, "d.src", map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "d.sink"})
	a.queue(vh, "d.sink", nil)

	// No dead-letter routing key: the source's own binding key is used.
	a.queue(vh, "k.src", map[string]any{"x-dead-letter-exchange": "dlx.direct"})
	a.bind(vh, "work", "k.src", "k.key")
	a.queue(vh, "k.sink", nil)
	a.bind(vh, "dlx.direct", "k.sink", "k.key")

	// A quorum queue with a delivery limit.
	a.queue(vh, "qq.src", map[string]any{"x-queue-type": "quorum", "x-delivery-limit": 1, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "qq.sink"})
	a.queue(vh, "qq.sink", map[string]any{"x-queue-type": "quorum"})

	// Name only, configuration only, and a plain queue.
	a.queue(vh, "billing.dlq", nil)
	a.queue(vh, "parked", nil)
	a.queue(vh, "plain", nil)

	// Policies reach the queue objects with the statistics, seconds later.
	for q, pol := range map[string]string{"p.src": "p", "o.src": "o", "m.src": "m"} {
		a.waitPolicy(vh, q, pol)
	}

	s := newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL}, Options{
		VHosts:         []string{vh},
		DLQNamePattern: testNamePattern,
		ExplicitDLQ:    func(v, q string) bool { return v == vh && q == "parked" },
	})
	snap := poll(t, s)

	tests := []struct {
		queue     string
		detection queue.DLQDetection // "" = not a DLQ
		sources   []string
	}{
		{"a.sink", queue.DetectedTopology, []string{"a.src", "a.src2"}},
		{"p.sink", queue.DetectedTopology, []string{"p.src"}},
		{"o.argsink", queue.DetectedTopology, []string{"o.src"}},
		{"o.policysink", "", nil},
		{"m.sink", queue.DetectedTopology, []string{"m.src"}},
		{"t.sink", queue.DetectedTopology, []string{"t.src"}},
		{"t.other", "", nil},
		{"f.sink1", queue.DetectedTopology, []string{"f.src"}},
		{"f.sink2", queue.DetectedTopology, []string{"f.src"}},
		{"d.sink", queue.DetectedTopology, []string{"d.src"}},
		{"k.sink", queue.DetectedTopology, []string{"k.src"}},
		{"qq.sink", queue.DetectedTopology, []string{"qq.src"}},
		{"billing.dlq", queue.DetectedName, nil},
		{"parked", queue.DetectedConfig, nil},
		{"plain", "", nil},
		{"a.src", "", nil},
		{"qq.src", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.queue, func(t *testing.T) {
			if _, ok := findQueue(snap, vh, tt.queue); !ok {
				t.Fatalf("queue %q not in snapshot", tt.queue)
			}
			d, ok := findDLQ(snap, vh, tt.queue)
			if tt.detection == "" {
				if ok {
					t.Fatalf("%q labelled DLQ (%s, sources %v)", tt.queue, d.Detection, d.Sources)
				}
				return
			}
			if !ok {
				t.Fatalf("%q not detected as DLQ; partial %v", tt.queue, snap.Partial)
			}
			if d.Detection != tt.detection || !slices.Equal(d.Sources, tt.sources) {
				t.Errorf("%q: detection %s sources %v, want %s %v", tt.queue, d.Detection, d.Sources, tt.detection, tt.sources)
			}
			if d.Err != "" || d.Messages != 0 {
				t.Errorf("%q: messages %d err %q, want 0 and no error", tt.queue, d.Messages, d.Err)
			}
		})
	}

	q, _ := findQueue(snap, vh, "o.src")
	if !q.HasDeadLetter || q.DeadLetterExchange != "dlx.direct" || q.DeadLetterRoutingKey != "o.args" {
		t.Errorf("o.src dead-letter settings %q %q %v, want dlx.direct o.args", q.DeadLetterExchange, q.DeadLetterRoutingKey, q.HasDeadLetter)
	}
	if q, _ := findQueue(snap, vh, "qq.src"); q.Type != "quorum" {
		t.Errorf("qq.src type %q, want quorum", q.Type)
	}
	if q, _ := findQueue(snap, vh, "p.src"); q.Policy != "p" {
		t.Errorf("p.src policy %q, want p", q.Policy)
	}
	if len(snap.Partial) != 0 {
		t.Errorf("partial: %v", snap.Partial)
	}

	// The broker agrees with the resolution: m.src's dead letters land in
	// m.sink and o.src's in o.argsink, none in o.policysink.
	ch := channel(t, vh)
	publish(t, ch, "", "m.src", text("m"))
	publish(t, ch, "", "o.src", text("o"))
	a.rejectOne(vh, "m.src")
	a.rejectOne(vh, "o.src")
	waitDepth(t, ch, "m.sink", 1)
	waitDepth(t, ch, "o.argsink", 1)
	waitDepth(t, ch, "o.policysink", 0)
}

// TestExactDepths dead-letters in each way the broker can and polls at once:
// the management statistics still show the old depth then, so the numbers
// can only come from AMQP.
func TestExactDepths(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("depth")
	ch := channel(t, vh)
	s := newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL}, Options{VHosts: []string{vh}})

	tests := []struct {
		name string
		args map[string]any
		act  func(src string)
		want int
	}{
		{"reject", nil, func(src string) {
			for range 3 {
				publish(t, ch, "", src, text("m"))
			}
			a.rejectOne(vh, src)
			a.rejectOne(vh, src)
		}, 2},
		{"ttl", map[string]any{"x-message-ttl": 1}, func(src string) {
			for range 4 {
				publish(t, ch, "", src, text("m"))
			}
		}, 4},
		{"max-length", map[string]any{"x-max-length": 2}, func(src string) {
			for range 5 {
				publish(t, ch, "", src, text("m"))
			}
		}, 3},
		{"delivery-limit", map[string]any{"x-queue-type": "quorum", "x-delivery-limit": 1}, func(src string) {
			publish(t, ch, "", src, text("m"))
			// Two returns exceed a limit of one; the message is then
			// dead-lettered.
			for range 2 {
				d, ok, err := ch.Get(src, false)
				if err != nil || !ok {
					t.Fatalf("get from %s: ok %v err %v", src, ok, err)
				}
				if err := d.Nack(false, true); err != nil {
					t.Fatal(err)
				}
			}
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, sink := tt.name+".src", tt.name+".sink"
			args := map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": sink}
			maps.Copy(args, tt.args)
			a.queue(vh, src, args)
			a.queue(vh, sink, nil)
			before := poll(t, s)
			if d := mustDLQ(t, before, vh, sink); d.Messages != 0 {
				t.Fatalf("sink starts with %d messages", d.Messages)
			}
			tt.act(src)
			waitDepth(t, ch, sink, tt.want)
			snap := poll(t, s)
			d := mustDLQ(t, snap, vh, sink)
			if d.Messages != int64(tt.want) || d.Err != "" {
				t.Fatalf("DLQ %s: %d messages (err %q), want %d", sink, d.Messages, d.Err, tt.want)
			}
			if d.Detection != queue.DetectedTopology || !slices.Equal(d.Sources, []string{src}) {
				t.Errorf("DLQ %s: %s from %v, want topology from %s", sink, d.Detection, d.Sources, src)
			}
			if !d.HasOldestAge || d.OldestAge < 0 || d.OldestAge > time.Minute {
				t.Errorf("DLQ %s oldest age %v (known %v), want a fresh x-death time", sink, d.OldestAge, d.HasOldestAge)
			}
			if q, _ := findQueue(snap, vh, sink); q.Ready != int64(tt.want) {
				t.Errorf("queue %s ready %d, want the exact %d", sink, q.Ready, tt.want)
			}
		})
	}
}

// TestOldestAgeLeavesQueueAsItWas measures DLQ ages on every poll and
// checks that order, content and delivery counts are unchanged: the age is
// exact from head_message_timestamp (a classic queue whose head carries a
// timestamp) and estimated otherwise, never read from the head.
func TestOldestAgeLeavesQueueAsItWas(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("age")
	ch := channel(t, vh)

	a.queue(vh, "src", map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "src.dlq"})
	a.queue(vh, "src.dlq", nil)
	for _, b := range []string{"m1", "m2", "m3"} {
		publish(t, ch, "", "src", text(b))
		a.rejectOne(vh, "src")
	}
	waitDepth(t, ch, "src.dlq", 3)

	// A DLQ by name whose head carries a timestamp but no x-death.
	a.queue(vh, "stamped.dlq", nil)
	publish(t, ch, "", "stamped.dlq", amqp.Publishing{Body: []byte("old"), Timestamp: time.Now().Add(-time.Hour)})

	// A quorum DLQ with a delivery limit.
	a.queue(vh, "limited.dlq", map[string]any{"x-queue-type": "quorum", "x-delivery-limit": 5})
	publish(t, ch, "", "limited.dlq", text("q"))
	waitDepth(t, ch, "limited.dlq", 1)

	s := newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL}, Options{VHosts: []string{vh}, DLQNamePattern: testNamePattern})
	// head_message_timestamp reaches the management API with the next
	// statistics, about five seconds after the publish.
	var snap *queue.Snapshot
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		snap = poll(t, s)
		if mustDLQ(t, snap, vh, "stamped.dlq").OldestAgeBasis == queue.AgeExact || time.Now().After(deadline) {
			break
		}
	}

	d := mustDLQ(t, snap, vh, "src.dlq")
	if d.Messages != 3 || !d.HasOldestAge || d.OldestAgeBasis != queue.AgeBacklog || d.OldestAge > time.Minute {
		t.Errorf("src.dlq: %d messages, age %v known %v basis %q; want 3 and a fresh estimate", d.Messages, d.OldestAge, d.HasOldestAge, d.OldestAgeBasis)
	}
	d = mustDLQ(t, snap, vh, "stamped.dlq")
	if !d.HasOldestAge || d.OldestAgeBasis != queue.AgeExact || d.OldestAge < 59*time.Minute || d.OldestAge > 61*time.Minute {
		t.Errorf("stamped.dlq age %v known %v basis %q, want exactly about 1h", d.OldestAge, d.HasOldestAge, d.OldestAgeBasis)
	}
	d = mustDLQ(t, snap, vh, "limited.dlq")
	if d.Messages != 1 || !d.HasOldestAge || d.OldestAgeBasis != queue.AgeBacklog {
		t.Errorf("limited.dlq: %d messages, age known %v basis %q; want 1 and an estimate", d.Messages, d.HasOldestAge, d.OldestAgeBasis)
	}

	for _, want := range []string{"m1", "m2", "m3"} {
		m, ok, err := ch.Get("src.dlq", true)
		if err != nil || !ok {
			t.Fatalf("get: ok %v err %v", ok, err)
		}
		if string(m.Body) != want {
			t.Fatalf("message %q at the head, want %q: peeking reordered the DLQ", m.Body, want)
		}
		if _, ok := m.Headers["x-death"]; !ok {
			t.Errorf("message %s lost its x-death header", want)
		}
	}
	m, ok, err := ch.Get("limited.dlq", true)
	if err != nil || !ok {
		t.Fatalf("get limited.dlq: ok %v err %v", ok, err)
	}
	if n, ok := m.Headers["x-delivery-count"]; ok && fmt.Sprint(n) != "0" {
		t.Errorf("limited.dlq message was delivered before (x-delivery-count %v)", n)
	}
}

func TestHostileNames(t *testing.T) {
	a := requireRabbit(t)
	odd := a.VHost("odd 100% /x")
	root := "/"
	id := testenv.Unique("")
	names := []struct{ vh, name string }{
		{root, id + "/orders/é ☃.dlq"},
		{odd, "заказы.dlq"},
		{odd, "注文 100%-dlq"},
		{odd, "a/b/c.dlq"},
		{odd, "плохо?#&=.dlq"},
	}
	for _, n := range names {
		a.queue(n.vh, n.name, nil)
		if n.vh == root {
			t.Cleanup(func() { a.Do("DELETE", rabbit.APIPath("queues", n.vh, n.name), nil) })
		}
		publish(t, channel(t, n.vh), "", n.name, text("x"))
	}

	for _, vhosts := range [][]string{{odd, root}, nil} {
		s := newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL}, Options{VHosts: vhosts, DLQNamePattern: testNamePattern})
		snap := poll(t, s)
		for _, n := range names {
			d := mustDLQ(t, snap, n.vh, n.name)
			if d.Messages != 1 || d.Err != "" || d.Detection != queue.DetectedName {
				t.Errorf("vhosts %q: %q/%q: %d messages, detection %s, err %q", vhosts, n.vh, n.name, d.Messages, d.Detection, d.Err)
			}
		}
		// Other test packages create vhosts while this one polls them all;
		// only this test's vhosts must read cleanly.
		for _, p := range snap.Partial {
			if vhosts != nil || strings.Contains(p, `"`+odd+`"`) || strings.Contains(p, `vhost "/"`) {
				t.Errorf("vhosts %q: partial %v", vhosts, p)
			}
		}
	}
}

// TestManyQueues exports 2,000 queues in 4 vhosts with a few requests, for
// configured vhosts and for all vhosts.
func TestManyQueues(t *testing.T) {
	a := requireRabbit(t)
	sizes := []int{800, 600, 400, 200}
	var vhosts []string
	for i, n := range sizes {
		vh := a.VHost("many")
		vhosts = append(vhosts, vh)
		ch := channel(t, vh)
		for j := range n {
			if _, err := ch.QueueDeclare(queueName(j), false, false, false, false, nil); err != nil {
				t.Fatal(err)
			}
		}
		// One dead-lettering pair per vhost through a named DLX, so
		// topology is read too.
		a.exchange(vh, "dlx", "direct", nil)
		a.bind(vh, "dlx", queueName(i), "dead")
		a.queue(vh, "src", map[string]any{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "dead"})
	}
	inVHosts := func(vh, _ string) bool { return slices.Contains(vhosts, vh) }

	var all []struct{ Name string }
	if err := json.Unmarshal(a.Do(http.MethodGet, "/api/vhosts", nil), &all); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		vhosts []string
		// maxRequests: /api/overview (the first poll reads the version),
		// 2+2+1+1 pages, one cluster-wide exchanges listing and each
		// vhost's DLX bindings; for all vhosts also /api/vhosts, and for
		// each other vhost on the shared broker (other test packages
		// create and delete theirs meanwhile) a page and perhaps its own
		// DLX bindings: requests grow with vhosts, never queues.
		maxRequests int64
	}{
		{"per-vhost", vhosts, 12},
		{"all-vhosts", nil, 12 + 1 + 2*int64(len(all)-len(vhosts)+4)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL}, Options{VHosts: tt.vhosts, IncludeQueue: inVHosts})
			snap := poll(t, s)
			count := map[string]int{}
			for _, q := range snap.Queues {
				count[q.VHost]++
			}
			for i, vh := range vhosts {
				if count[vh] != sizes[i]+1 {
					t.Errorf("vhost %s: %d queues, want %d", vh, count[vh], sizes[i]+1)
				}
				d := mustDLQ(t, snap, vh, queueName(i))
				if !slices.Equal(d.Sources, []string{"src"}) {
					t.Errorf("vhost %s: DLQ sources %v", vh, d.Sources)
				}
			}
			if n := s.HTTPRequests(); n > tt.maxRequests || n < 12 {
				t.Errorf("%d management requests, want 12..%d", n, tt.maxRequests)
			}
			t.Logf("%d queues, %d requests, %v", len(snap.Queues), s.HTTPRequests(), snap.Duration)
		})
	}
}

func queueName(i int) string { return fmt.Sprintf("q-%05d", i) }

// TestDLQFedByManyQueues checks that a DLQ fed by hundreds of queues keeps
// every source in the snapshot while its source label (Source, used by
// queuewatch_dlq_messages) stays bounded and stable from poll to poll.
func TestDLQFedByManyQueues(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("fedby")
	a.exchange(vh, "dlx", "fanout", nil)
	a.queue(vh, "dead-letters", nil)
	a.bind(vh, "dlx", "dead-letters", "")
	ch := channel(t, vh)
	const n = 300
	for i := range n {
		if _, err := ch.QueueDeclare(fmt.Sprintf("orders-service-%04d", i), false, false, false, false,
			amqp.Table{"x-dead-letter-exchange": "dlx"}); err != nil {
			t.Fatal(err)
		}
	}
	s := newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL}, Options{VHosts: []string{vh}})
	first := mustDLQ(t, poll(t, s), vh, "dead-letters")
	if len(first.Sources) != n {
		t.Fatalf("%d sources, want %d", len(first.Sources), n)
	}
	label := first.Source()
	if len(label) > 256 || !strings.HasPrefix(label, "orders-service-0000,orders-service-0001,") || !strings.HasSuffix(label, " +288 more") {
		t.Errorf("source label %q (%d bytes): want the first names and \" +288 more\", at most 256 bytes", label, len(label))
	}
	second := mustDLQ(t, poll(t, s), vh, "dead-letters")
	if again := second.Source(); again != label {
		t.Errorf("source label changed between polls: %q, then %q", label, again)
	}
}

// TestTopologyReadDuringListing checks that reading the topology while the
// queues are listed, for the last poll's routed queues, sees what changed
// since: a new binding at once, and a new dead-lettering queue through a
// second read.
func TestTopologyReadDuringListing(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("early")
	a.exchange(vh, "dlx", "direct", nil)
	a.queue(vh, "src", map[string]any{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "dead"})
	a.queue(vh, "sink1", nil)
	a.bind(vh, "dlx", "sink1", "dead")
	s := newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL}, Options{VHosts: []string{vh}})
	s.noteVersion(context.Background()) // read once, at the first poll; not what this test counts

	before := s.HTTPRequests()
	snap := poll(t, s)
	first := s.HTTPRequests() - before
	if d := mustDLQ(t, snap, vh, "sink1"); d.Detection != queue.DetectedTopology {
		t.Fatalf("sink1 detection %s, want topology", d.Detection)
	}

	// Same routed queues: the early read is used, and it sees the binding
	// made after the last poll.
	a.queue(vh, "sink2", nil)
	a.bind(vh, "dlx", "sink2", "dead")
	before = s.HTTPRequests()
	snap = poll(t, s)
	if n := s.HTTPRequests() - before; n != first {
		t.Errorf("unchanged routing took %d requests, want %d as in the first poll (no second topology read)", n, first)
	}
	if d := mustDLQ(t, snap, vh, "sink2"); !slices.Equal(d.Sources, []string{"src"}) {
		t.Errorf("sink2 sources %v, want [src]", d.Sources)
	}

	// A new routed queue: the early read is for the old ones, so the
	// topology is read again.
	a.exchange(vh, "dlx2", "fanout", nil)
	a.queue(vh, "src2", map[string]any{"x-dead-letter-exchange": "dlx2"})
	a.queue(vh, "sink3", nil)
	a.bind(vh, "dlx2", "sink3", "")
	before = s.HTTPRequests()
	snap = poll(t, s)
	if n := s.HTTPRequests() - before; n <= first {
		t.Errorf("changed routing took %d requests, want more than %d (a second topology read)", n, first)
	}
	if d := mustDLQ(t, snap, vh, "sink3"); !slices.Equal(d.Sources, []string{"src2"}) {
		t.Errorf("sink3 sources %v, want [src2]", d.Sources)
	}
	mustDLQ(t, snap, vh, "sink1")
}
