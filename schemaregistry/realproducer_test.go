package schemaregistry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestMain stops the registry and the Kafka node the tests started.
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopSchemaRegistry()
	testenv.StopKafka()
	os.Exit(code)
}

// sentRecord is one line produce.py prints: what it handed a serializer
// and the same in the JSON mapping Decode documents.
type sentRecord struct {
	Topic       string          `json:"topic"`
	Partition   int32           `json:"partition"`
	Offset      int64           `json:"offset"`
	Format      string          `json:"format"`
	Key         json.RawMessage `json:"key"`
	Value       json.RawMessage `json:"value"`
	ExpectKey   json.RawMessage `json:"expect_key"`
	ExpectValue json.RawMessage `json:"expect_value"`
}

// produced runs produce.py (confluent-kafka's AvroSerializer,
// ProtobufSerializer and JSONSerializer) against the registry and a real
// Kafka, and reads its records back: what it says it sent, and the
// records as they are on the topics.
func produced(t *testing.T) (registryURL string, sent []sentRecord, records map[string]*kgo.Record) {
	t.Helper()
	testenv.Slow(t, "a real Kafka, a real schema registry and a Python producer")
	registryURL = testenv.SchemaRegistry(t)
	node := testenv.RealKafka(t)
	python, _, err := testenv.KafkaPython()
	testenv.Require(t, "confluent-kafka", err)
	topic := testenv.Unique("sr")

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, filepath.Join("testdata", "produce.py"), registryURL, node.Addr(), topic)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("produce.py: %v: %s", err, stderr.String())
	}
	topics := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r sentRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("produce.py printed %q: %v", sc.Text(), err)
		}
		sent = append(sent, r)
		topics[r.Topic] = true
	}
	if len(sent) == 0 {
		t.Fatalf("produce.py printed nothing; stderr: %s", stderr.String())
	}

	var names []string
	for name := range topics {
		names = append(names, name)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(node.Addr()), kgo.ConsumeTopics(names...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	records = map[string]*kgo.Record{}
	for len(records) < len(sent) {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records: %v", len(records), len(sent), err)
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fetches.EachRecord(func(r *kgo.Record) { records[recordID(r.Topic, r.Partition, r.Offset)] = r })
	}
	return registryURL, sent, records
}

func recordID(topic string, partition int32, offset int64) string {
	return fmt.Sprintf("%s/%d@%d", topic, partition, offset)
}

// TestDecodeRealProducers decodes what confluent-kafka's three
// serializers wrote through a real Apicurio Registry and a real Kafka,
// key and value, and compares each field with what the producer sent.
func TestDecodeRealProducers(t *testing.T) {
	url, sent, records := produced(t)
	reg, err := New(config.SchemaRegistry{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	formats := map[string]int{}
	for _, s := range sent {
		rec := records[recordID(s.Topic, s.Partition, s.Offset)]
		if rec == nil {
			t.Fatalf("record %s not read back", recordID(s.Topic, s.Partition, s.Offset))
		}
		formats[s.Format]++
		name := fmt.Sprintf("%s/%d", s.Topic, s.Offset)
		for _, part := range []struct {
			what   string
			bytes  []byte
			expect json.RawMessage
		}{{"key", rec.Key, s.ExpectKey}, {"value", rec.Value, s.ExpectValue}} {
			if string(part.expect) == "null" || part.expect == nil {
				continue
			}
			d, ok := reg.Decode(t.Context(), part.bytes)
			if !ok {
				t.Errorf("%s %s: not taken for the wire format: % x", name, part.what, part.bytes)
				continue
			}
			if d.Error != "" {
				t.Errorf("%s %s: %s", name, part.what, d.Error)
				continue
			}
			if d.Format != s.Format {
				t.Errorf("%s %s: format %q, want %q", name, part.what, d.Format, s.Format)
			}
			// The registry names the first subject of an id; the Protobuf
			// key, value and nested value share one schema (the file),
			// registered under three subjects.
			if subject := s.Topic + "-" + part.what; d.Schema.ID == 0 || d.Schema.Version < 1 ||
				s.Format != FormatProtobuf && d.Schema.Subject != subject || d.Schema.Subject == "" {
				t.Errorf("%s %s: schema %+v, want subject %s and a version", name, part.what, d.Schema, subject)
			}
			if !json.Valid(d.Value) {
				t.Errorf("%s %s: value is not JSON: %s", name, part.what, d.Value)
				continue
			}
			var got, want any
			if err := json.Unmarshal(d.Value, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(part.expect, &want); err != nil {
				t.Fatal(err)
			}
			for _, diff := range compareJSON(part.what, want, got) {
				t.Errorf("%s: %s", name, diff)
			}
			t.Logf("%s %s: %s", name, part.what, d.Value)
		}
	}
	for _, f := range []string{FormatAvro, FormatProtobuf, FormatJSONSchema} {
		if formats[f] == 0 {
			t.Errorf("no %s record produced", f)
		}
	}

	t.Run("corrupt", func(t *testing.T) { decodeCorrupted(t, reg, sent, records) })
}

// compareJSON lists where got differs from want, field by field. Strings
// that are both RFC 3339 times compare as times (the producer and the
// decoder may write different fractional digits).
func compareJSON(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %v, want an object %v", path, got, want)}
		}
		var diffs []string
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: missing (want %v)", path, k, w[k]))
				continue
			}
			diffs = append(diffs, compareJSON(path+"."+k, w[k], gv)...)
		}
		for k := range g {
			// protojson shows an unset message field as null, where
			// Python's json_format leaves it out.
			if _, ok := w[k]; !ok && g[k] != nil {
				diffs = append(diffs, fmt.Sprintf("%s.%s: unexpected %v", path, k, g[k]))
			}
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, compareJSON(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return diffs
	case string:
		if g, ok := got.(string); ok && g != w {
			tw, errW := time.Parse(time.RFC3339Nano, w)
			tg, errG := time.Parse(time.RFC3339Nano, g)
			if errW == nil && errG == nil && tw.Equal(tg) {
				return nil
			}
		}
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: got %#v, want %#v", path, got, want)}
	}
	return nil
}

// decodeCorrupted truncates every real record at every length and flips
// bytes in it: Decode must answer (a value or an error), valid JSON, no
// panic.
func decodeCorrupted(t *testing.T, reg *Registry, sent []sentRecord, records map[string]*kgo.Record) {
	errs := map[string]int{}
	for _, s := range sent {
		rec := records[recordID(s.Topic, s.Partition, s.Offset)]
		for _, b := range [][]byte{rec.Key, rec.Value} {
			if len(b) < 5 || b[0] != 0 {
				continue
			}
			var variants [][]byte
			for n := 5; n < len(b); n++ {
				variants = append(variants, b[:n])
			}
			for i := 5; i < len(b); i++ {
				for _, mask := range []byte{0x01, 0x80, 0xff} {
					c := bytes.Clone(b)
					c[i] ^= mask
					variants = append(variants, c)
				}
			}
			variants = append(variants, append(bytes.Clone(b), 0x02, 0x7f))
			for _, v := range variants {
				d, ok := reg.Decode(t.Context(), v)
				if !ok {
					t.Fatalf("% x: not taken for the wire format", v)
				}
				checkDecoded(t, v, d)
				if d.Error != "" {
					errs[s.Format]++
				}
			}
		}
	}
	for _, f := range []string{FormatAvro, FormatProtobuf, FormatJSONSchema} {
		if errs[f] == 0 {
			t.Errorf("no corrupted %s record gave an error", f)
		}
	}
	t.Logf("errors from corrupted records: %v", errs)
}

// checkDecoded checks d is either a JSON value or an error.
func checkDecoded(t *testing.T, b []byte, d queue.Decoded) {
	t.Helper()
	switch {
	case d.Error == "" && d.Value == nil:
		t.Errorf("% x: neither a value nor an error", b)
	case d.Error != "" && d.Value != nil:
		t.Errorf("% x: both a value and the error %s", b, d.Error)
	case d.Value != nil && !json.Valid(d.Value):
		t.Errorf("% x: value is not JSON: %q", b, d.Value)
	case d.Error != "" && strings.TrimSpace(d.Error) == "":
		t.Errorf("% x: blank error", b)
	}
}
