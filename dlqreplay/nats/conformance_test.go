package nats

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/conformance"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, newWorld)
}

const (
	dlStream   = "QW_DL"
	consumer   = "worker"
	origPrefix = "world-orig:" // Nats-Msg-Id of what the world publishes itself
)

// world is an embedded JetStream server with stream ORDERS (subject
// "orders") whose pull consumer "worker" (max_deliver 3) really
// dead-letters what DeadLetter publishes, a capture worker copying the
// dead letters into QW_DL, and stream MOVED (subject "moved"). A message
// whose Origin is set dies in a stream of its own that is deleted before
// the job, so its original subject is stored by no stream.
type world struct {
	t     *testing.T
	dir   string
	port  int
	mu    sync.Mutex
	srv   *server.Server
	nc    *nats.Conn
	js    jetstream.JetStream
	cl    *brokernats.Cluster
	dlq   string
	read  map[string]uint64                // next sequence to take, by subject
	saved map[string][]conformance.Arrival // arrivals kept from a deleted stream
}

func newWorld(t *testing.T) conformance.World {
	w := &world{t: t, dir: t.TempDir(), read: map[string]uint64{}, saved: map[string][]conformance.Arrival{}}
	w.start(t, -1)
	w.port = w.srv.Addr().(*net.TCPAddr).Port
	nc, err := nats.Connect(w.srv.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	w.nc = nc
	w.js, _ = jetstream.New(nc)
	t.Cleanup(nc.Close)
	w.cl, err = brokernats.New(config.NATS{Name: "n", URL: w.srv.ClientURL(), DeadLetters: config.NATSDeadLetters{Capture: true, Stream: dlStream}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, s := range []jetstream.StreamConfig{{Name: "ORDERS", Subjects: []string{"orders"}}, {Name: "MOVED", Subjects: []string{"moved"}}} {
		if _, err := w.js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.cl.EnsureCapture(ctx, w.js); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.cl.RunCapture(cctx, slog.New(slog.DiscardHandler)); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	w.dlq = dlqreplay.Ref{Broker: queue.NATS, Cluster: "n", Name: brokernats.DLQName("ORDERS", consumer)}.ID()
	return w
}

// start starts the server on port (-1: any) over the world's store.
func (w *world) start(t *testing.T, port int) {
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: w.dir, NoLog: true, NoSigs: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	w.mu.Lock()
	w.srv = s
	w.mu.Unlock()
	w.t.Cleanup(s.Shutdown)
}

func (w *world) server() *server.Server {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.srv
}

func (w *world) Service(t *testing.T, maxReplays int) *dlqreplay.Service {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return w.service(t, maxReplays, st)
}

// ServiceOn's crash drops the replay connections as the "queuewatch
// killed" fault does (they never reconnect); a later job takes the DLQ
// once the dead one's lease runs out.
func (w *world) ServiceOn(t *testing.T, st dlqreplay.Store) (*dlqreplay.Service, func(t *testing.T)) {
	return w.service(t, 0, st), w.killReplays
}

// killReplays drops every replay connection without a goodbye.
func (w *world) killReplays(t *testing.T) {
	cz, err := w.server().Connz(&server.ConnzOptions{})
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	for _, c := range cz.Conns {
		if c.Name == "queuewatch dlq replay" {
			if err := w.server().DisconnectClientByID(c.Cid); err != nil {
				t.Fatal(err)
			}
			killed++
		}
	}
	if killed == 0 {
		t.Fatal("no replay connection to kill")
	}
}

func (w *world) service(t *testing.T, maxReplays int, st dlqreplay.Store) *dlqreplay.Service {
	be, err := New(Options{Cluster: w.cl, LeaseTTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := dlqreplay.New(dlqreplay.Options{
		Store: st, Backends: []dlqreplay.Backend{be}, MaxReplays: maxReplays, FlushInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc
}

func (w *world) DLQ() string    { return w.dlq }
func (w *world) Source() string { return "orders" }
func (w *world) Other() string  { return "moved" }

// DeadLetter dead-letters msgs for real, in runs of one origin so that
// the copies keep their order.
func (w *world) DeadLetter(t *testing.T, msgs ...conformance.Message) {
	for len(msgs) > 0 {
		n := 1
		for n < len(msgs) && msgs[n].Origin == msgs[0].Origin {
			n++
		}
		w.deadLetterRun(t, msgs[0].Origin, msgs[:n])
		msgs = msgs[n:]
	}
}

func (w *world) deadLetterRun(t *testing.T, origin string, msgs []conformance.Message) {
	ctx := context.Background()
	stream, subject := "ORDERS", "orders"
	if origin != "" {
		// The DLQ is ORDERS' consumer's: ORDERS stores origin while its
		// messages die, and no stream stores it after.
		subject = origin
		w.ordersSubjects(t, "orders", origin)
	}
	cons, err := w.js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
		Durable: consumer, AckPolicy: jetstream.AckExplicitPolicy, MaxDeliver: 3, AckWait: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Copies a job replayed are the consumer's too: it takes them first,
	// so that only msgs die.
	for {
		b, err := cons.FetchNoWait(1000)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for m := range b.Messages() {
			got++
			_ = m.Ack()
		}
		if got == 0 {
			break
		}
	}
	before := w.captured(t)
	for _, m := range msgs {
		nm := nats.NewMsg(subject)
		nm.Header.Set(conformance.TestIDHeader, m.ID)
		nm.Header.Set("tenant", m.Tenant)
		nm.Header.Set(jetstream.MsgIDHeader, origPrefix+m.ID+":"+strconv.FormatInt(time.Now().UnixNano(), 10))
		if m.ReplayCount > 0 {
			nm.Header.Set(queue.HeaderReplayCount, strconv.Itoa(m.ReplayCount))
		}
		nm.Data = []byte(`{"id":"` + m.ID + `"}`)
		if _, err := w.js.PublishMsg(ctx, nm); err != nil {
			t.Fatal(err)
		}
	}
	for got, want := 0, 3*len(msgs); got < want; {
		b, err := cons.Fetch(want-got, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for m := range b.Messages() {
			n++
			if err := m.Nak(); err != nil {
				t.Fatal(err)
			}
		}
		if n == 0 {
			t.Fatalf("fetched %d of %d deliveries", got, want)
		}
		got += n
	}
	// The server notices max_deliver at the next pull.
	if b, err := cons.Fetch(1, jetstream.FetchMaxWait(200*time.Millisecond)); err == nil {
		for range b.Messages() {
			t.Fatal("a message was delivered a fourth time")
		}
	}
	for deadline := time.Now().Add(30 * time.Second); w.captured(t) < before+len(msgs); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("captured %d of %d dead letters", w.captured(t)-before, len(msgs))
		}
	}
	if origin != "" {
		w.ordersSubjects(t, "orders")
	}
}

// ordersSubjects sets the subjects ORDERS stores, the rest of its
// configuration left as it is.
func (w *world) ordersSubjects(t *testing.T, subjects ...string) {
	ctx := context.Background()
	s, err := w.js.Stream(ctx, "ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.Subjects = subjects
	if _, err := w.js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
}

// captured is the number of copies in the DLQ.
func (w *world) captured(t *testing.T) int {
	return len(w.copies(t))
}

// copies reads the DLQ's copies in order, retrying while the server
// restarts.
func (w *world) copies(t *testing.T) []*jetstream.RawStreamMsg {
	return w.readSubject(t, dlStream, brokernats.DeadLetterSubject(dlStream, "ORDERS", consumer), 1)
}

// readSubject reads stream's messages on subject from seq.
func (w *world) readSubject(t *testing.T, stream, subject string, seq uint64) []*jetstream.RawStreamMsg {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, err := w.tryRead(stream, subject, seq)
		if err == nil {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("read %s %s: %v", stream, subject, err)
		}
	}
}

func (w *world) tryRead(stream, subject string, seq uint64) ([]*jetstream.RawStreamMsg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := w.js.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	var out []*jetstream.RawStreamMsg
	for {
		raw, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				return out, nil
			}
			return nil, err
		}
		out = append(out, raw)
		seq = raw.Sequence + 1
	}
}

func (w *world) InDLQ(t *testing.T) []string {
	var out []string
	for _, raw := range w.copies(t) {
		out = append(out, raw.Header.Get(conformance.TestIDHeader))
	}
	return out
}

var streamOf = map[string]string{"orders": "ORDERS", "moved": "MOVED"}

// Arrived takes the copies stored on subject name since the last call;
// the world's own publications are not arrivals.
func (w *world) Arrived(t *testing.T, name string) []conformance.Arrival {
	out := w.saved[name]
	delete(w.saved, name)
	return append(out, w.take(t, name)...)
}

func (w *world) take(t *testing.T, name string) []conformance.Arrival {
	var out []conformance.Arrival
	for _, raw := range w.readSubject(t, streamOf[name], name, max(w.read[name], 1)) {
		w.read[name] = raw.Sequence + 1
		if strings.HasPrefix(raw.Header.Get(jetstream.MsgIDHeader), origPrefix) {
			continue
		}
		out = append(out, conformance.Arrival{
			ID:          raw.Header.Get(conformance.TestIDHeader),
			ReplayCount: raw.Header.Get(queue.HeaderReplayCount), ReplayID: raw.Header.Get(queue.HeaderReplayID),
		})
	}
	return out
}

// Faults: the server restarted on the same store, the target stream full
// (discard new), the target stream deleted, and queuewatch killed (its
// connections cut without a goodbye; a new instance resumes once the
// lease runs out).
func (w *world) Faults() []conformance.Fault {
	ctx := context.Background()
	update := func(t *testing.T, f func(*jetstream.StreamConfig)) {
		s, err := w.js.Stream(ctx, "ORDERS")
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cfg := info.Config
		f(&cfg)
		if _, err := w.js.UpdateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	return []conformance.Fault{
		{
			Name: "server restart",
			Inject: func(t *testing.T) {
				w.server().Shutdown()
				w.start(t, w.port)
			},
		},
		{
			Name: "target stream full with discard new",
			Inject: func(t *testing.T) {
				update(t, func(c *jetstream.StreamConfig) {
					c.Discard = jetstream.DiscardNew
					c.MaxMsgs = 1 // fewer than it holds: every publish is refused
				})
			},
			Heal: func(t *testing.T) {
				update(t, func(c *jetstream.StreamConfig) { c.Discard, c.MaxMsgs = jetstream.DiscardOld, -1 })
			},
		},
		{
			// Sealed first (publishes are refused from then on) so that
			// what it stored can be counted before it goes.
			Name: "target stream deleted",
			Inject: func(t *testing.T) {
				update(t, func(c *jetstream.StreamConfig) { c.Sealed = true })
				w.saved["orders"] = append(w.saved["orders"], w.take(t, "orders")...)
				if err := w.js.DeleteStream(ctx, "ORDERS"); err != nil {
					t.Fatal(err)
				}
			},
			Heal: func(t *testing.T) {
				if _, err := w.js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders"}}); err != nil {
					t.Fatal(err)
				}
				w.read["orders"] = 0
			},
		},
		{
			Name:   "queuewatch killed",
			Inject: w.killReplays,
		},
	}
}
