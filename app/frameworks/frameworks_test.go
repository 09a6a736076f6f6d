package frameworks

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/app"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestMain shares one real Kafka node among the package's tests.
func TestMain(m *testing.M) { testenv.KafkaMain(m) }

// queuewatch is queuewatch started with app.Run, as `serve` starts it.
type queuewatch struct {
	base string
}

// config is the configuration the tests start queuewatch with: polling
// every second, nothing else changed from the defaults.
func baseConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.PollInterval, cfg.PollTimeout = time.Second, time.Second
	return cfg
}

func start(t *testing.T, cfg *config.Config) *queuewatch {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- app.Run(ctx, app.Options{Config: cfg, Listen: "127.0.0.1:0", Listening: func(a string) { addr <- a }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("app.Run: %v", err)
		}
	})
	select {
	case a := <-addr:
		return &queuewatch{base: "http://" + a}
	case err := <-done:
		t.Fatalf("app.Run returned before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("app.Run did not start listening")
	}
	return nil
}

// get returns the body of a 200 response to path.
func (q *queuewatch) get(t *testing.T, path string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, q.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", path, resp.Status, body)
	}
	return body
}

// dlq is one entry of GET /api/v1/dlqs.
type dlq struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Sources   []string `json:"sources"`
	Detection string   `json:"detection"`
	Messages  int64    `json:"messages"`
}

// waitDLQ polls the API until it lists the DLQ id holding n messages.
func (q *queuewatch) waitDLQ(t *testing.T, id string, n int64) dlq {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last []dlq
	for time.Now().Before(deadline) {
		var list struct {
			DLQs []dlq `json:"dlqs"`
		}
		if err := json.Unmarshal(q.get(t, "/api/v1/dlqs"), &list); err != nil {
			t.Fatal(err)
		}
		last = list.DLQs
		for _, d := range last {
			if d.ID == id && d.Messages == n {
				return d
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("the API never listed %s with %d messages; last: %+v", id, n, last)
	return dlq{}
}

// message is one message of GET /api/v1/dlqs/{id}/messages, with the
// failure as the API decodes it.
type message struct {
	ID         string            `json:"id"`
	Position   int64             `json:"position"`
	Partition  int32             `json:"partition"`
	KeyText    string            `json:"key_text"`
	Properties map[string]string `json:"properties"`
	Headers    []header          `json:"headers"`
	Body       []byte            `json:"body"`
	Failure    failure           `json:"failure"`
	Timestamp  time.Time         `json:"timestamp"`
}

type header struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
	Kind  string `json:"kind,omitempty"`
}

// saveGolden writes the headers of one real dead letter, as queuewatch's
// browse read them, to queue/testdata/deadletters/<name>.json when
// QUEUEWATCH_UPDATE_GOLDEN=1: queue's decoding tests then run on what the
// framework really wrote, without the framework.
func saveGolden(t *testing.T, name string, hs []header) {
	t.Helper()
	if os.Getenv("QUEUEWATCH_UPDATE_GOLDEN") != "1" {
		return
	}
	b, err := json.MarshalIndent(hs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "queue", "testdata", "deadletters", name+".json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

type failure struct {
	Source                string     `json:"source"`
	Reason                string     `json:"reason"`
	Framework             string     `json:"framework"`
	ExceptionClass        string     `json:"exception_class"`
	ExceptionMessage      string     `json:"exception_message"`
	StackTrace            string     `json:"stack_trace"`
	OriginalExchange      string     `json:"original_exchange"`
	OriginalRoutingKey    string     `json:"original_routing_key"`
	OriginalTopic         string     `json:"original_topic"`
	OriginalPartition     *int32     `json:"original_partition"`
	OriginalOffset        *int64     `json:"original_offset"`
	OriginalTimestamp     *time.Time `json:"original_timestamp"`
	ConsumerGroup         string     `json:"consumer_group"`
	CauseClass            string     `json:"cause_class"`
	Connector             string     `json:"connector"`
	TaskID                *int32     `json:"task_id"`
	Stage                 string     `json:"stage"`
	ExecutingClass        string     `json:"executing_class"`
	WrapperClass          string     `json:"wrapper_class"`
	OriginalTimestampType string     `json:"original_timestamp_type"`
}

// messages browses the DLQ through the API.
func (q *queuewatch) messages(t *testing.T, id string) []message {
	t.Helper()
	var page struct {
		Messages []message `json:"messages"`
	}
	if err := json.Unmarshal(q.get(t, "/api/v1/dlqs/"+url.PathEscape(id)+"/messages?limit=100"), &page); err != nil {
		t.Fatal(err)
	}
	return page.Messages
}

// kafka is the shared real node with a client for setting up and reading
// topics the way a test, not queuewatch, reads them.
type kafka struct {
	node *testenv.KafkaNode
	cl   *kgo.Client
	adm  *kadm.Client
}

func realKafka(t *testing.T) *kafka {
	t.Helper()
	node := testenv.RealKafka(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(node.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &kafka{node: node, cl: cl, adm: kadm.NewClient(cl)}
}

func (k *kafka) createTopic(t *testing.T, name string, partitions int32) {
	t.Helper()
	resp, err := k.adm.CreateTopic(context.Background(), partitions, 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
}

// produce writes the records and returns them with their partitions,
// offsets and timestamps as the broker assigned them.
func (k *kafka) produce(t *testing.T, recs ...*kgo.Record) []*kgo.Record {
	t.Helper()
	if err := k.cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// readAll reads every record of topic from the start, n in all, with its
// headers as they are on the wire.
func (k *kafka) readAll(t *testing.T, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.node.Addr()), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records of %s: %v", len(out), n, topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

func headerOf(r *kgo.Record, key string) ([]byte, bool) {
	for _, h := range r.Headers {
		if h.Key == key {
			return h.Value, true
		}
	}
	return nil, false
}

// byPosition finds the API's message for a record.
func byPosition(t *testing.T, msgs []message, partition int32, offset int64) message {
	t.Helper()
	for _, m := range msgs {
		if m.Partition == partition && m.Position == offset {
			return m
		}
	}
	t.Fatalf("the API has no message at partition %d offset %d", partition, offset)
	return message{}
}

// readAllOr is readAll for records a background process writes: it fails
// at once, with the process's output, when the process exits first.
func (k *kafka) readAllOr(t *testing.T, topic string, n int, exited <-chan error, out fmt.Stringer) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.node.Addr()), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < n {
		select {
		case err := <-exited:
			t.Fatalf("the process exited (%v) after %d of %d records in %s:\n%s", err, len(recs), n, topic, out)
		default:
		}
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		pcancel()
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s:\n%s", len(recs), n, topic, out)
		}
		fs.EachRecord(func(r *kgo.Record) { recs = append(recs, r) })
	}
	return recs
}

// checkPage fetches the DLQ page, as an operator opens it, and checks
// that it shows each of wants (HTML-escaped as the page escapes text).
func checkPage(t *testing.T, q *queuewatch, id string, wants ...string) {
	t.Helper()
	page := string(q.get(t, "/dlq/"+url.PathEscape(id)))
	for _, want := range wants {
		if !strings.Contains(page, html.EscapeString(want)) {
			t.Errorf("the DLQ page of %s does not show %q", id, want)
		}
	}
}
