package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/schemaregistry"
)

// maskedFields are the fields the test's masking rule hides: the Avro
// user's name and emails, the Protobuf order's customer, the JSON Schema
// event's who.name.
var maskedFields = []string{"$.name", "$..emails", "$.customer", "$.who.name"}

// TestSchemaRegistryDeadLetters runs the whole path on real parts:
// confluent-kafka's AvroSerializer, ProtobufSerializer and JSONSerializer
// write through a real Apicurio Registry to real Kafka topics; a
// confluent-kafka consumer fails every record and dead-letters its bytes
// to <topic>.DLT, Spring style. queuewatch, configured with the registry
// and a masking rule, shows each dead letter decoded exactly as the
// registry decodes it, with the masked fields hidden and no clear value in
// the response (as text or base64) or the logs; then it replays every DLT
// to its original topic, and the copies are byte for byte the dead
// letters' keys and values: the display decoding never re-encodes.
func TestSchemaRegistryDeadLetters(t *testing.T) {
	testenv.Slow(t, "a real Kafka, a real schema registry and Python producers")
	registryURL := testenv.SchemaRegistry(t)
	node := testenv.RealKafka(t)
	python, _, err := testenv.KafkaPython()
	testenv.Require(t, "confluent-kafka", err)
	topic := testenv.Unique("pay")
	formats := []string{"avro", "protobuf", "json"}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	perTopic := map[string]int{}
	for _, line := range runPython(ctx, t, python, filepath.Join("..", "schemaregistry", "testdata", "produce.py"), registryURL, node.Addr(), topic) {
		var r struct{ Topic string }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("produce.py printed %q: %v", line, err)
		}
		perTopic[r.Topic]++
	}
	var sources []string
	total := 0
	for _, f := range formats {
		sources = append(sources, topic+"."+f)
		total += perTopic[topic+"."+f]
	}
	if total < 6 {
		t.Fatalf("produce.py wrote %v", perTopic)
	}
	dead := runPython(ctx, t, python, filepath.Join("testdata", "deadletter.py"), append([]string{node.Addr(), strconv.Itoa(total)}, sources...)...)
	if len(dead) != 1 || dead[0] != strconv.Itoa(total) {
		t.Fatalf("deadletter.py dead-lettered %v of %d", dead, total)
	}

	var logs lockedBuffer
	cfg := testConfig(t, config.Kafka{Name: "prod", Brokers: []string{node.Addr()}, SchemaRegistry: &config.SchemaRegistry{URL: registryURL}})
	cfg.PollInterval, cfg.PollTimeout = 2*time.Second, 2*time.Second
	cfg.Masking = []config.MaskRule{{Fields: maskedFields}}
	qw := startWith(t, Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	reg, err := schemaregistry.New(config.SchemaRegistry{URL: registryURL})
	if err != nil {
		t.Fatal(err)
	}

	var secrets []string
	for _, f := range formats {
		dlq := "kafka:prod::" + topic + "." + f + ".DLT"
		dlt := readTopic(ctx, t, node.Addr(), topic+"."+f+".DLT", 0, perTopic[topic+"."+f])
		raw, page := getPage(t, qw.base, dlq)
		if len(page.Messages) != len(dlt) {
			t.Fatalf("%s: the API lists %d messages, the topic holds %d", dlq, len(page.Messages), len(dlt))
		}
		var firstDecoded json.RawMessage
		for i, m := range page.Messages {
			want, ok := reg.Decode(ctx, dlt[i].Value)
			if i == 0 {
				firstDecoded = want.Value
			}
			if !ok || want.Error != "" || m.Decoded == nil || m.Decoded.Error != "" {
				t.Fatalf("%s %s: decoded %+v, the registry decodes %+v", dlq, m.ID, m.Decoded, want)
			}
			if m.Decoded.Format != want.Format || m.Decoded.Schema != want.Schema || !strings.HasSuffix(want.Schema.Subject, "-value") {
				t.Errorf("%s %s: format/schema %s %+v, want %s %+v", dlq, m.ID, m.Decoded.Format, m.Decoded.Schema, want.Format, want.Schema)
			}
			masked, hidden := maskExpected(t, want.Value)
			secrets = append(secrets, hidden...)
			if !jsonEqual(t, m.Decoded.Value, masked) {
				t.Errorf("%s %s: shown\n %s\nwant (the registry's decoding, masked)\n %s", dlq, m.ID, m.Decoded.Value, masked)
			}
			if wantKey, ok := reg.DecodeKey(ctx, dlt[i].Key); ok && (m.KeyDecoded == nil || !jsonEqual(t, m.KeyDecoded.Value, wantKey.Value) || m.KeyDecoded.Schema != wantKey.Schema) {
				t.Errorf("%s %s: key shown as %+v, want %s", dlq, m.ID, m.KeyDecoded, wantKey.Value)
			}
			if m.Failure.ExceptionClass != "com.acme.payments.CardDeclinedException" || m.Failure.OriginalTopic != topic+"."+f {
				t.Errorf("%s %s: failure %+v", dlq, m.ID, m.Failure)
			}
		}
		noClearValues(t, dlq+" messages", raw, secrets)
		if f == "avro" {
			searchDecoded(t, qw.base, dlq, page.Messages[0].ID, firstDecoded, secrets)
		}
		replayAll(ctx, t, qw.base, dlq)
		copies := readTopic(ctx, t, node.Addr(), topic+"."+f, int64(perTopic[topic+"."+f]), len(dlt))
		for i := range dlt {
			if !bytes.Equal(copies[i].Value, dlt[i].Value) || !bytes.Equal(copies[i].Key, dlt[i].Key) {
				t.Errorf("%s: copy %d differs from its dead letter:\n key %x\nwant %x\n value %x\nwant %x", f, i, copies[i].Key, dlt[i].Key, copies[i].Value, dlt[i].Value)
			}
		}
	}
	if len(secrets) < 4 {
		t.Fatalf("the masking rule hid only %v: the test checks nothing", secrets)
	}
	noClearValues(t, "the logs", logs.Bytes(), secrets)
}

// searchDecoded: a search across every DLQ by a path into the decoded
// Avro value ($.id == the first dead letter's id, as the registry decodes
// it) finds that message in dlq; a search by any clear value masking hid
// finds nothing, in any mode.
func searchDecoded(t *testing.T, base, dlq, msgID string, decoded json.RawMessage, secrets []string) {
	t.Helper()
	var v struct{ ID json.Number }
	if err := json.Unmarshal(decoded, &v); err != nil || v.ID == "" {
		t.Fatalf("the registry's decoding %s has no id: %v", decoded, err)
	}
	type answer struct {
		Hits []struct {
			DLQ     string
			Message struct{ ID string }
		}
	}
	search := func(q url.Values) (answer, []byte) {
		resp, err := http.Get(base + "/api/v1/search?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var a answer
		if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &a) != nil {
			t.Fatalf("search %v = %d %s", q, resp.StatusCode, raw)
		}
		return a, raw
	}
	// The search reads the DLQs the last poll counted: it finds the
	// message once a poll has counted the DLQ.
	eventually(t, "a search by the decoded id", func() bool {
		a, _ := search(url.Values{"mode": {"path"}, "q": {"$.id == " + v.ID.String()}})
		for _, h := range a.Hits {
			if h.DLQ == dlq && h.Message.ID == msgID {
				return true
			}
		}
		return false
	})
	for _, secret := range secrets {
		for _, q := range []url.Values{{"q": {secret}}, {"mode": {"text"}, "q": {secret}}, {"mode": {"cel"}, "q": {"body.contains(" + strconv.Quote(secret) + ")"}}} {
			if a, raw := search(q); len(a.Hits) != 0 {
				t.Errorf("search %v found %d messages by a masked value", q, len(a.Hits))
				noClearValues(t, "the search", raw, secrets)
			}
		}
	}
}

// runPython runs a script with the confluent-kafka virtualenv's Python and
// returns its output lines.
func runPython(ctx context.Context, t *testing.T, python, script string, args ...string) []string {
	t.Helper()
	cmd := exec.CommandContext(ctx, python, append([]string{script}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s", filepath.Base(script), err, stderr.String())
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// readTopic reads n records of partition 0 of topic from offset from.
func readTopic(ctx context.Context, t *testing.T, addr, topic string, from int64, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(from)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records of %s: %v", len(out), n, topic, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		out = append(out, fs.Records()...)
	}
	return out[:n]
}

type shownMessage struct {
	ID         string
	Decoded    *queue.Decoded `json:"decoded"`
	KeyDecoded *queue.Decoded `json:"key_decoded"`
	Failure    struct {
		ExceptionClass string `json:"exception_class"`
		OriginalTopic  string `json:"original_topic"`
	}
}

// getPage reads the DLQ's first page through the API, as raw bytes and
// decoded, once the DLQ is readable.
func getPage(t *testing.T, base, dlq string) ([]byte, struct{ Messages []shownMessage }) {
	t.Helper()
	var raw []byte
	var page struct{ Messages []shownMessage }
	eventually(t, "the DLQ "+dlq+" through the API", func() bool {
		resp, err := http.Get(base + "/api/v1/dlqs/" + url.PathEscape(dlq) + "/messages?limit=100")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		raw, _ = io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && json.Unmarshal(raw, &page) == nil && len(page.Messages) > 0
	})
	return raw, page
}

// replayAll replays every message of the DLQ to its original topic and
// waits for the job to succeed.
func replayAll(ctx context.Context, t *testing.T, base, dlq string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/dlqs/"+url.PathEscape(dlq)+"/replay",
		strings.NewReader(`{"action":"replay","selection":{"all":true},"rate":-1}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var started struct{ Job struct{ ID string } }
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(body, &started) != nil || started.Job.ID == "" {
		t.Fatalf("replay %s = %d %s", dlq, resp.StatusCode, body)
	}
	job := started.Job
	eventually(t, "replay "+job.ID, func() bool {
		resp, err := http.Get(base + "/api/v1/replays/" + job.ID + "?outcomes=false")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var r struct{ Job struct{ State, Error string } }
		if json.NewDecoder(resp.Body).Decode(&r) != nil {
			return false
		}
		if r.Job.State == "failed" || r.Job.State == "cancelled" {
			t.Fatalf("replay %s ended %s: %s", job.ID, r.Job.State, r.Job.Error)
		}
		return r.Job.State == "succeeded"
	})
}

// maskExpected returns the registry's decoding with the test's masked
// fields redacted, and the clear strings it hid.
func maskExpected(t *testing.T, v json.RawMessage) (json.RawMessage, []string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(v, &doc); err != nil {
		t.Fatal(err)
	}
	var hidden []string
	hide := func(x any) any {
		switch s := x.(type) {
		case nil:
			return nil
		case string:
			if len(s) > 3 {
				hidden = append(hidden, s)
			}
		}
		return "[masked]"
	}
	for _, k := range []string{"name", "customer"} {
		if x, ok := doc[k]; ok {
			doc[k] = hide(x)
		}
	}
	if es, ok := doc["emails"].([]any); ok {
		for i := range es {
			es[i] = hide(es[i])
		}
	}
	if who, ok := doc["who"].(map[string]any); ok {
		if x, ok := who["name"]; ok {
			who["name"] = hide(x)
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out, hidden
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// noClearValues fails when any secret is in b, as text, JSON-escaped or
// inside a base64 string.
func noClearValues(t *testing.T, what string, b []byte, secrets []string) {
	t.Helper()
	var decoded []byte
	for _, f := range bytes.FieldsFunc(b, func(r rune) bool { return r == '"' }) {
		if d, err := base64.StdEncoding.DecodeString(string(f)); err == nil {
			decoded = append(decoded, d...)
		}
	}
	for _, s := range secrets {
		escaped, _ := json.Marshal(s)
		for _, form := range [][]byte{[]byte(s), escaped[1 : len(escaped)-1]} {
			if bytes.Contains(b, form) || bytes.Contains(decoded, form) {
				t.Errorf("%s show the masked value %q", what, s)
			}
		}
	}
}

// lockedBuffer is a bytes.Buffer the logger and the test may share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// TestCheckSchemaRegistry: queuewatch check says a cluster's schema
// registry answers (with its subject count), and fails naming one that
// does not.
func TestCheckSchemaRegistry(t *testing.T) {
	registryURL := testenv.SchemaRegistry(t)
	c := seededCluster(t, nil, t.TempDir())
	t.Cleanup(c.Close)
	cfg := testConfig(t,
		config.Kafka{Name: "prod", Brokers: c.ListenAddrs(), SchemaRegistry: &config.SchemaRegistry{URL: registryURL}},
		config.Kafka{Name: "dev", Brokers: c.ListenAddrs(), SchemaRegistry: &config.SchemaRegistry{URL: "http://127.0.0.1:1/apis/ccompat/v7"}},
	)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Check(t.Context(), cfg, &out, nil)
	if err == nil || !strings.Contains(err.Error(), "schema registry of kafka:dev") {
		t.Errorf("check = %v, want the dev registry's failure", err)
	}
	if !regexpMatch(`(?m)^ok   schema registry of kafka:prod: \d+ subjects?$`, out.String()) || !strings.Contains(out.String(), "FAIL schema registry of kafka:dev: ") {
		t.Errorf("check printed:\n%s", out.String())
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }
