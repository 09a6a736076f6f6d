package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// termAll publishes n messages to subject and terminates each through
// consumer.
func termAll(t *testing.T, js jetstream.JetStream, stream, consumer, subject string, n int) {
	t.Helper()
	ctx := context.Background()
	cons, err := js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
		Durable: consumer, AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: subject,
	})
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := js.Publish(ctx, subject, []byte(`{"x":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := cons.Fetch(n, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for m := range b.Messages() {
		got++
		if err := m.TermWithReason("bad"); err != nil {
			t.Fatal(err)
		}
	}
	if got != n {
		t.Fatalf("fetched %d of %d", got, n)
	}
}

// With dead_letters.capture on, serve captures JetStream dead letters,
// counts those whose payload was gone, and browses and replays them
// through the API.
func TestNATSDeadLettersServed(t *testing.T) {
	s, err := server.NewServer(&server.Options{Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(s.Shutdown)
	cfg := testConfig(t)
	cfg.NATS = []config.NATS{{Name: "n", URL: s.ClientURL(), DeadLetters: config.NATSDeadLetters{Capture: true}}}
	r := start(t, cfg)

	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "JOBS", Subjects: []string{"jobs"}, Retention: jetstream.WorkQueuePolicy}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the capture streams", func() bool {
		_, err := js.Stream(ctx, config.DefaultNATSDeadLetterStream+"_ADVISORIES")
		return err == nil
	})
	termAll(t, js, "JOBS", "runner", "jobs", 3)      // a work queue drops terminated messages: lost
	termAll(t, js, "ORDERS", "billing", "orders", 2) // kept: captured with payload

	eventually(t, "the lost counter", func() bool {
		_, body := r.get(t, "/metrics")
		return strings.Contains(body, `queuewatch_nats_dead_letters_lost_total{cluster="n"} 3`)
	})
	id := queue.DLQRef{Broker: queue.NATS, Cluster: "n", Name: "ORDERS.billing"}.ID()
	var page struct {
		Messages []queue.Message `json:"messages"`
	}
	eventually(t, "two dead letters of billing", func() bool {
		code, body := r.get(t, "/api/v1/dlqs/"+url.PathEscape(id)+"/messages")
		return code == 200 && json.Unmarshal([]byte(body), &page) == nil && len(page.Messages) == 2
	})
	resp, err := http.Post(r.base+"/api/v1/dlqs/"+url.PathEscape(id)+"/replay", "application/json",
		strings.NewReader(`{"selection":{"all":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("replay: %s", resp.Status)
	}
	orders, _ := js.Stream(ctx, "ORDERS")
	eventually(t, "two replayed copies in ORDERS", func() bool {
		info, err := orders.Info(ctx)
		return err == nil && info.State.Msgs == 4
	})
	m, err := orders.GetMsg(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if m.Header.Get(queue.HeaderReplayCount) != "1" || m.Header.Get(queue.HeaderReplayID) == "" || string(m.Data) != `{"x":1}` {
		t.Fatalf("replayed copy %v %q", m.Header, m.Data)
	}
	eventually(t, "billing's dlq empty", func() bool {
		code, body := r.get(t, "/api/v1/dlqs/"+url.PathEscape(id)+"/messages")
		return code == 200 && json.Unmarshal([]byte(body), &page) == nil && len(page.Messages) == 0
	})
}

// TestNATSCaptureFailuresExported checks that dead letters capture cannot
// store (here: the dead-letter stream, made by hand, is full and refuses
// new messages) are counted per stream on /metrics.
func TestNATSCaptureFailuresExported(t *testing.T) {
	s, err := server.NewServer(&server.Options{Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(s.Shutdown)
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	dl := config.DefaultNATSDeadLetterStream
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: dl, Subjects: []string{dl + ".>"}, MaxMsgs: 1, Discard: jetstream.DiscardNew, Duplicates: time.Hour,
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders"}}); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.NATS = []config.NATS{{Name: "n", URL: s.ClientURL(), DeadLetters: config.NATSDeadLetters{Capture: true}}}
	r := start(t, cfg)
	eventually(t, "the capture streams", func() bool {
		_, err := js.Stream(ctx, dl+"_ADVISORIES")
		return err == nil
	})
	termAll(t, js, "ORDERS", "billing", "orders", 3) // one copy fits, two are refused
	// Two refusals at first, two more per retry.
	series := `queuewatch_nats_capture_failures_total{cluster="n",stream="ORDERS"} `
	eventually(t, "the failure counter", func() bool {
		_, body := r.get(t, "/metrics")
		_, rest, ok := strings.Cut(body, series)
		line, _, _ := strings.Cut(rest, "\n")
		n, err := strconv.Atoi(line)
		return ok && err == nil && n >= 2 && n%2 == 0
	})
}

// natsServer starts an embedded JetStream server for one test.
func natsServer(t *testing.T) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(s.Shutdown)
	return s
}

// listedDLQ is the DLQ /api/v1/dlqs lists with id and its depth.
func (r *running) listedDLQ(t *testing.T, id string) (int64, bool) {
	t.Helper()
	_, body := r.get(t, "/api/v1/dlqs")
	var dlqs []struct {
		ID       string `json:"id"`
		Messages int64  `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &dlqs); err != nil {
		var wrapped struct {
			DLQs []struct {
				ID       string `json:"id"`
				Messages int64  `json:"messages"`
			} `json:"dlqs"`
		}
		if err := json.Unmarshal([]byte(body), &wrapped); err != nil {
			t.Fatalf("dlqs %q: %v", body, err)
		}
		dlqs = wrapped.DLQs
	}
	for _, d := range dlqs {
		if d.ID == id {
			return d.Messages, true
		}
	}
	return 0, false
}

func (r *running) post(t *testing.T, path, body string) int {
	t.Helper()
	resp, err := http.Post(r.base+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestNATSDLQIdentity checks a NATS DLQ's id through the API: it is
// "<stream>.<consumer>" from its first dead letter on and does not change
// when a second stream gets a consumer of the same name; an id that
// lists nothing (a consumer that does not exist, or the consumer name
// alone, as DLQs were once named) answers 404 to browse, page and replay;
// and a DLQ a replay drained stays listed at 0, its series too, while
// its consumer exists.
func TestNATSDLQIdentity(t *testing.T) {
	s := natsServer(t)
	cfg := testConfig(t)
	cfg.NATS = []config.NATS{{Name: "n", URL: s.ClientURL(), DeadLetters: config.NATSDeadLetters{Capture: true}}}
	r := start(t, cfg)
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	for _, name := range []string{"ORDERS", "PAYMENTS"} {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name)}}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the capture streams", func() bool {
		_, err := js.Stream(ctx, config.DefaultNATSDeadLetterStream+"_ADVISORIES")
		return err == nil
	})
	termAll(t, js, "ORDERS", "worker", "orders", 2)

	for _, bad := range []string{"nosuchconsumer", "ORDERS.nosuchconsumer", "NOSUCHSTREAM.worker", "worker"} {
		bad := queue.DLQRef{Broker: queue.NATS, Cluster: "n", Name: bad}.ID()
		if code, _ := r.get(t, "/api/v1/dlqs/"+url.PathEscape(bad)+"/messages"); code != http.StatusNotFound {
			t.Errorf("browse %s: %d, want 404", bad, code)
		}
		if code, _ := r.get(t, "/dlq/"+url.PathEscape(bad)); code != http.StatusNotFound {
			t.Errorf("page %s: %d, want 404", bad, code)
		}
		if code := r.post(t, "/api/v1/dlqs/"+url.PathEscape(bad)+"/replay", `{"selection":{"all":true},"dry_run":true}`); code != http.StatusNotFound {
			t.Errorf("replay %s: %d, want 404", bad, code)
		}
	}

	id := queue.DLQRef{Broker: queue.NATS, Cluster: "n", Name: "ORDERS.worker"}.ID()
	eventually(t, "ORDERS.worker listed with 2", func() bool { n, ok := r.listedDLQ(t, id); return ok && n == 2 })

	termAll(t, js, "PAYMENTS", "worker", "payments", 1)
	other := queue.DLQRef{Broker: queue.NATS, Cluster: "n", Name: "PAYMENTS.worker"}.ID()
	eventually(t, "PAYMENTS.worker listed with 1", func() bool { n, ok := r.listedDLQ(t, other); return ok && n == 1 })
	if n, ok := r.listedDLQ(t, id); !ok || n != 2 {
		t.Fatalf("%s after a second stream's worker dead-lettered: listed %v with %d, want 2", id, ok, n)
	}

	if code := r.post(t, "/api/v1/dlqs/"+url.PathEscape(id)+"/replay", `{"selection":{"all":true}}`); code != http.StatusAccepted {
		t.Fatalf("replay: %d", code)
	}
	series := `queuewatch_dlq_messages{broker="nats",cluster="n",dlq="ORDERS.worker",source="ORDERS",vhost=""} 0`
	eventually(t, "ORDERS.worker listed at 0 and its series 0", func() bool {
		n, ok := r.listedDLQ(t, id)
		_, metrics := r.get(t, "/metrics")
		return ok && n == 0 && strings.Contains(metrics, series)
	})
	if code, _ := r.get(t, "/api/v1/dlqs/"+url.PathEscape(id)+"/messages"); code != http.StatusOK {
		t.Errorf("browse the drained %s: %d, want 200", id, code)
	}
}

// TestNATSDeadCaptureIsSourceError checks that a capture that cannot run
// (another stream takes the advisory subjects, as a second queuewatch
// with another dead_letters.stream does) is a source error that blanks
// nothing else: check fails naming it, and serve keeps the consumers'
// metrics fresh (collector_up 1), exports collector_partial_errors 1 and
// shows the error on the source, rather than logging retries while
// everything looks healthy. A size limit on the advisory stream, which
// drops advisories, does too.
func TestNATSDeadCaptureIsSourceError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream jetstream.StreamConfig
		want   string
	}{
		{
			"advisory subjects taken",
			jetstream.StreamConfig{Name: "QW_OTHER_ADVISORIES", Subjects: []string{"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>", "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.>"}},
			"stream QW_OTHER_ADVISORIES takes subject",
		},
		{"advisory stream limited", jetstream.StreamConfig{
			Name: config.DefaultNATSDeadLetterStream + "_ADVISORIES", Subjects: []string{"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>", "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.>"},
			Retention: jetstream.WorkQueuePolicy, MaxMsgs: 10,
		}, "has max_msgs 10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := natsServer(t)
			nc, err := nats.Connect(s.ClientURL())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			js, _ := jetstream.New(nc)
			if _, err := js.CreateStream(context.Background(), tc.stream); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", jetstream.ConsumerConfig{Durable: "billing", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
				t.Fatal(err)
			}
			publish := func() {
				t.Helper()
				if _, err := js.Publish(ctx, "orders.new", []byte("{}")); err != nil {
					t.Fatal(err)
				}
			}
			publish()
			cfg := testConfig(t)
			cfg.NATS = []config.NATS{{Name: "n", URL: s.ClientURL(), DeadLetters: config.NATSDeadLetters{Capture: true}}}
			if err := cfg.Validate(); err != nil { // defaults, as config.Parse gives check
				t.Fatal(err)
			}
			var out strings.Builder
			err = Check(context.Background(), cfg, &out, nil)
			if err == nil || !strings.Contains(out.String(), "FAIL nats:n: dead-letter capture cannot do its work: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("check: err %v, output %q; want nats:n to fail saying %q", err, out.String(), tc.want)
			}
			r := start(t, cfg)
			pending := func(n int) string {
				return fmt.Sprintf(`queuewatch_nats_consumer_pending_messages{cluster="n",consumer="billing",stream="ORDERS"} %d`, n)
			}
			eventually(t, "collector_up 1, partial 1, billing's pending 1", func() bool {
				_, body := r.get(t, "/metrics")
				return strings.Contains(body, `queuewatch_collector_up{broker="nats",cluster="n"} 1`) &&
					strings.Contains(body, `queuewatch_collector_partial_errors{broker="nats",cluster="n"} 1`) &&
					strings.Contains(body, pending(1))
			})
			// Fresh, not frozen: the next polls read what changed.
			publish()
			eventually(t, "billing's pending 2", func() bool {
				_, body := r.get(t, "/metrics")
				return strings.Contains(body, pending(2))
			})
			src := r.sources(t).Sources[0]
			if !src.Up || src.LastError != "" || len(src.Partial) != 1 || !strings.Contains(src.Partial[0], "dead-letter capture") || !strings.Contains(src.Partial[0], tc.want) {
				t.Errorf("source %+v: want up, partial the capture error saying %q", src, tc.want)
			}
		})
	}
}
