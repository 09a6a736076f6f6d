package schemaregistry

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// wire is payload in the Confluent wire format with schema id.
func wire(id int, payload ...byte) []byte {
	b := binary.BigEndian.AppendUint32([]byte{0}, uint32(id))
	return append(b, payload...)
}

// fakeRegistry answers /schemas/ids/{id} from schemas (and
// /subjects/{subject}/versions/{version} from subjects) and counts the
// requests; hold, when set, is waited on before answering.
type fakeRegistry struct {
	*httptest.Server
	schemas  map[int]idAnswer
	subjects map[string]idAnswer // by "subject@version"
	requests atomic.Int64
	mu       sync.Mutex
	hold     chan struct{}
	auth     string // "user:password" when basic auth is required
}

// holdRequests makes requests wait until the returned release is called
// (or the test ends).
func (f *fakeRegistry) holdRequests() (release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	hold := make(chan struct{})
	f.hold = hold
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.hold == hold {
				f.hold = nil
			}
			close(hold)
		})
	}
}

func newFakeRegistry(t testing.TB, schemas map[int]idAnswer) *fakeRegistry {
	f := &fakeRegistry{schemas: schemas}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.mu.Lock()
		if f.hold != nil {
			close(f.hold)
			f.hold = nil
		}
		f.mu.Unlock()
		f.Close()
	})
	return f
}

func (f *fakeRegistry) serve(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	f.mu.Lock()
	hold := f.hold
	f.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if f.auth != "" {
		user, pass, ok := r.BasicAuth()
		if !ok || user+":"+pass != f.auth {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error_code":40101,"message":"Unauthorized"}`)
			return
		}
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/subjects/"); ok {
		a, ok := f.subjects[strings.Replace(rest, "/versions/", "@", 1)]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(a)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/schemas/ids/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	idText, versions := strings.CutSuffix(rest, "/versions")
	id, _ := strconv.Atoi(idText)
	a, ok := f.schemas[id]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error_code":40403,"message":"Schema %d not found"}`, id)
		return
	}
	if versions {
		fmt.Fprintf(w, `[{"subject":"s%d-value","version":3}]`, id)
		return
	}
	_ = json.NewEncoder(w).Encode(a)
}

func newRegistry(t testing.TB, url string) *Registry {
	t.Helper()
	r, err := New(config.SchemaRegistry{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestNotWireFormat: bytes that are not in the wire format are left to
// the caller, without asking the registry.
func TestNotWireFormat(t *testing.T) {
	f := newFakeRegistry(t, nil)
	r := newRegistry(t, f.URL)
	for _, b := range [][]byte{nil, {}, []byte(`{"a":1}`), []byte("plain text"), {0}, {0, 0, 0, 1}, {1, 0, 0, 0, 1, 2}} {
		if d, ok := r.Decode(t.Context(), b); ok {
			t.Errorf("% x: decoded as %+v, want not in the wire format", b, d)
		}
	}
	if n := f.requests.Load(); n != 0 {
		t.Errorf("%d registry requests, want none", n)
	}
}

// TestUnknownSchemaID asks a real registry for an id it does not have:
// the error names the id, and is remembered.
func TestUnknownSchemaID(t *testing.T) {
	r := newRegistry(t, testenv.SchemaRegistry(t))
	const id = 987654
	d, ok := r.Decode(t.Context(), wire(id, 2, 'a'))
	if !ok || d.Error == "" || !strings.Contains(d.Error, strconv.Itoa(id)) || d.Schema.ID != id || d.Value != nil {
		t.Fatalf("Decode = %+v, %v; want an error naming schema %d", d, ok, id)
	}
	t.Log(d.Error)

	f := newFakeRegistry(t, nil)
	r = newRegistry(t, f.URL)
	for range 100 {
		d, _ := r.Decode(t.Context(), wire(id, 2, 'a'))
		if !strings.Contains(d.Error, "not found") {
			t.Fatalf("Decode error %q, want not found", d.Error)
		}
	}
	if n := f.requests.Load(); n != 1 {
		t.Errorf("100 messages of an unknown id cost %d requests, want 1", n)
	}
}

// TestRegistryDown: a closed port fails fast; a registry that does not
// answer costs one timeout, after which every schema id fails at once.
func TestRegistryDown(t *testing.T) {
	port := testenv.FreePorts(t, 1)[0]
	r := newRegistry(t, fmt.Sprintf("http://127.0.0.1:%d/apis/ccompat/v7", port))
	start := time.Now()
	d, ok := r.Decode(t.Context(), wire(7, 2, 'a'))
	if !ok || !strings.Contains(d.Error, "unreachable") || !strings.Contains(d.Error, "schema 7") {
		t.Fatalf("Decode = %+v, %v; want registry unreachable for schema 7", d, ok)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a closed port took %s", took)
	}
	t.Log(d.Error)

	f := newFakeRegistry(t, map[int]idAnswer{1: {Schema: `"string"`}})
	release := f.holdRequests()
	r = newRegistry(t, f.URL)
	r.timeout = 500 * time.Millisecond
	start = time.Now()
	d, _ = r.Decode(t.Context(), wire(1, 2, 'a'))
	first := time.Since(start)
	if !strings.Contains(d.Error, "unreachable") || first < r.timeout {
		t.Fatalf("Decode = %+v after %s; want unreachable after the %s timeout", d, first, r.timeout)
	}
	start = time.Now()
	for id := range 1000 {
		d, _ = r.Decode(t.Context(), wire(id, 2, 'a'))
		if !strings.Contains(d.Error, "unreachable") {
			t.Fatalf("schema %d: %+v, want unreachable", id, d)
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("1000 more messages took %s after the first timeout", took)
	}
	if n := f.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	t.Logf("first %s: %s", first, d.Error)

	// After failTTL the registry is asked again.
	now := time.Now().Add(failTTL + time.Second)
	r.now = func() time.Time { return now }
	release()
	if d, _ = r.Decode(t.Context(), wire(1, 2, 'a')); d.Error != "" || string(d.Value) != `"a"` {
		t.Errorf("after %s: %+v, want \"a\"", failTTL, d)
	}
}

// TestSharedFetch: callers decoding the same id at once share one fetch,
// and the schema is fetched once for good.
func TestSharedFetch(t *testing.T) {
	f := newFakeRegistry(t, map[int]idAnswer{1: {Schema: `"string"`}})
	release := f.holdRequests()
	r := newRegistry(t, f.URL)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if d, _ := r.Decode(t.Context(), wire(1, 2, 'a')); string(d.Value) != `"a"` || d.Format != FormatAvro {
				t.Errorf("Decode = %+v", d)
			}
		})
	}
	time.Sleep(100 * time.Millisecond)
	release()
	wg.Wait()
	for range 10 {
		r.Decode(t.Context(), wire(1, 2, 'b'))
	}
	// One for the schema, one for its subject and version.
	if n := f.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	d, _ := r.Decode(t.Context(), wire(1, 2, 'a'))
	if d.Schema.Subject != "s1-value" || d.Schema.Version != 3 {
		t.Errorf("schema %+v, want s1-value version 3", d.Schema)
	}

	// A caller that gives up does not wait for the fetch.
	defer f.holdRequests()()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if d, _ := r.Decode(ctx, wire(2, 2, 'a')); !strings.Contains(d.Error, "deadline") || time.Since(start) > time.Second {
		t.Errorf("Decode = %+v after %s, want the caller's deadline", d, time.Since(start))
	}
}

// TestBasicAuth: credentials are sent, from the config or the URL, and
// the password never shows in an error.
func TestBasicAuth(t *testing.T) {
	const password = "s3cr3t-pa55"
	f := newFakeRegistry(t, map[int]idAnswer{1: {Schema: `"string"`}})
	f.auth = "qw:" + password
	for _, cfg := range []config.SchemaRegistry{
		{URL: f.URL, Username: "qw", Password: password},
		{URL: strings.Replace(f.URL, "http://", "http://qw:"+password+"@", 1)},
	} {
		r, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if d, _ := r.Decode(t.Context(), wire(1, 2, 'a')); string(d.Value) != `"a"` {
			t.Errorf("Decode = %+v", d)
		}
	}
	for _, cfg := range []config.SchemaRegistry{
		{URL: f.URL, Username: "qw", Password: password + "x"},
		{URL: strings.Replace(f.URL, "http://", "http://qw:"+password+"x@", 1)},
		{URL: "http://qw:" + password + "@127.0.0.1:1/x"},
	} {
		r, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := r.Decode(t.Context(), wire(1, 2, 'a'))
		if d.Error == "" || strings.Contains(d.Error, password) {
			t.Errorf("Decode error %q, want an error without the password", d.Error)
		}
		t.Log(d.Error)
	}
	if _, err := New(config.SchemaRegistry{URL: "ftp://qw:" + password + "@host"}); err == nil || strings.Contains(err.Error(), password) {
		t.Errorf("New error %v, want one without the password", err)
	}
	if _, err := New(config.SchemaRegistry{URL: "http://qw:" + password + "@host:port:x"}); err == nil || strings.Contains(err.Error(), password) {
		t.Errorf("New error %v, want one without the password", err)
	}
}

// TestUnsupportedAndBrokenSchemas: a schema type other than the three, or
// a schema that does not parse, is an error naming the id.
func TestUnsupportedAndBrokenSchemas(t *testing.T) {
	f := newFakeRegistry(t, map[int]idAnswer{
		1: {Schema: "<xs:schema/>", SchemaType: "XML"},
		2: {Schema: `{"type":"record","name":"A","fields":[{"name":"x","type":"nope"}]}`},
		3: {Schema: `syntax = "proto3"; message A { nope x = 1; }`, SchemaType: "PROTOBUF"},
		4: {Schema: `{"type":`, SchemaType: "JSON"},
		5: {Schema: `"int"`, References: []reference{{Name: "x", Subject: "missing", Version: 1}}},
	})
	r := newRegistry(t, f.URL)
	for id, want := range map[int]string{1: `unsupported schema type "XML"`, 2: "parse avro schema", 3: "parse protobuf schema", 4: "not JSON", 5: "reference x"} {
		d, ok := r.Decode(t.Context(), wire(id, 2))
		if !ok || !strings.Contains(d.Error, want) || !strings.Contains(d.Error, fmt.Sprintf("schema %d", id)) {
			t.Errorf("schema %d: %+v, want an error with %q", id, d, want)
		}
	}
}

// TestHostileAvro: lengths and counts from a corrupt payload bound
// neither memory nor time, and strings and floats stay JSON.
func TestHostileAvro(t *testing.T) {
	f := newFakeRegistry(t, map[int]idAnswer{
		1: {Schema: `"string"`},
		2: {Schema: `{"type":"array","items":"null"}`},
		3: {Schema: `{"type":"map","values":{"type":"record","name":"E","fields":[]}}`},
		4: {Schema: `"double"`},
		5: {Schema: `"bytes"`},
		6: {Schema: `{"type":"record","name":"L","fields":[{"name":"next","type":["null","L"]}]}`},
		7: {Schema: `{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}`},
		8: {Schema: `{"type":"enum","name":"E","symbols":["A"]}`},
	})
	r := newRegistry(t, f.URL)
	zigzag := func(v int64) []byte { return binary.AppendVarint(nil, v) }
	nan := binary.LittleEndian.AppendUint64(nil, 0x7ff8000000000001)
	inf := binary.LittleEndian.AppendUint64(nil, 0xfff0000000000000)
	deep := []byte{}
	for range 10000 {
		deep = append(deep, 2) // the L branch, again and again
	}
	cases := []struct {
		name    string
		b       []byte
		value   string // wanted value, or "" for an error
		errWant string
	}{
		{"huge string length", wire(1, zigzag(1<<60)...), "", "beyond the payload"},
		{"negative string length", wire(1, zigzag(-5)...), "", "invalid length"},
		{"invalid UTF-8", wire(1, append(zigzag(4), 'a', 0xff, 0xfe, '"')...), "\"a\uFFFD\uFFFD\\\"\"", ""},
		{"control characters", wire(1, append(zigzag(3), 0, '\n', 0x1f)...), `"\u0000\n\u001f"`, ""},
		{"billions of nulls", wire(2, zigzag(1<<62)...), "", "larger than"},
		{"negative block count", wire(2, append(zigzag(-(1<<62)), zigzag(1<<40)...)...), "", "invalid block header"},
		{"billions of empty records", wire(3, append(zigzag(1<<40), zigzag(0)...)...), "", ""},
		{"NaN", wire(4, nan...), `"NaN"`, ""},
		{"-Infinity", wire(4, inf...), `"-Infinity"`, ""},
		{"huge bytes", wire(5, zigzag(1<<40)...), "", "beyond the payload"},
		{"deep recursion", wire(6, deep...), "", "nested deeper"},
		{"huge decimal", wire(7, zigzag(1<<30)...), "", "beyond the payload"},
		{"enum out of range", wire(8, zigzag(3)...), "", "enum index 3"},
		{"trailing bytes", wire(1, append(zigzag(1), 'a', 'b')...), "", "bytes left"},
		{"truncated", wire(1, append(zigzag(10), 'a')...), "", "beyond the payload"},
		{"truncated long", wire(1, 0x80), "", "payload ends"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			d, ok := r.Decode(t.Context(), c.b)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if !ok {
				t.Fatal("not taken for the wire format")
			}
			checkDecoded(t, c.b, d)
			switch {
			case c.value != "" && string(d.Value) != c.value:
				t.Errorf("value %s (error %q), want %s", d.Value, d.Error, c.value)
			case c.value == "" && d.Error == "":
				t.Errorf("value %.100s, want an error", d.Value)
			case c.errWant != "" && !strings.Contains(d.Error, c.errWant):
				t.Errorf("error %q, want %q", d.Error, c.errWant)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
			if took > 10*time.Second {
				t.Errorf("took %s", took)
			}
			t.Logf("%s %s in %s", d.Value, d.Error, took)
		})
	}
}

// TestHostileProtobufAndJSON: message indexes and payloads that do not
// fit the schema are errors; JSON payloads are checked.
func TestHostileProtobufAndJSON(t *testing.T) {
	proto, err := os.ReadFile("testdata/proto/qw/common.proto")
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeRegistry(t, map[int]idAnswer{
		1: {Schema: string(proto), SchemaType: "PROTOBUF"},
		2: {Schema: `{"type":"object"}`, SchemaType: "JSON"},
	})
	r := newRegistry(t, f.URL)
	cases := []struct {
		name         string
		b            []byte
		value, error string
	}{
		{"shorthand [0]", wire(1, 0, 0x0a, 3, 'E', 'U', 'R'), `{"currency":"EUR","units":"0","nanos":0}`, ""},
		{"explicit [0]", wire(1, 2, 0, 0x0a, 0), `{"currency":"","units":"0","nanos":0}`, ""},
		{"no such message", wire(1, 2, 2), "", "no message 1"},
		{"no such nested message", wire(1, 4, 0, 0), "", "no message 0 in qw.common.Money"},
		{"huge count", wire(1, 0xfe, 0xff, 0xff, 0xff, 0x0f), "", "invalid count"},
		{"negative count", wire(1, 1), "", "invalid count"},
		{"count without indexes", wire(1, 6), "", "ends in the middle"},
		{"bad wire type", wire(1, 0, 0x0f), "", "qw.common.Money"},
		{"huge length", wire(1, 0, 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f), "", "qw.common.Money"},
		{"invalid UTF-8", wire(1, 0, 0x0a, 1, 0xff), "", "UTF-8"},
		{"JSON", wire(2, []byte(` {"a": [1, 2.5, "x"]} `)...), `{"a":[1,2.5,"x"]}`, ""},
		{"JSON with invalid UTF-8", wire(2, []byte("\"a\xffb\"")...), `"a` + "\uFFFD" + `b"`, ""},
		{"not JSON", wire(2, []byte(`{"a":`)...), "", "not JSON"},
		{"empty JSON", wire(2), "", "not JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, ok := r.Decode(t.Context(), c.b)
			if !ok {
				t.Fatal("not taken for the wire format")
			}
			checkDecoded(t, c.b, d)
			if c.value != "" && string(d.Value) != c.value || c.error != "" && !strings.Contains(d.Error, c.error) {
				t.Errorf("Decode = %s %q, want %s %q", d.Value, d.Error, c.value, c.error)
			}
			t.Logf("%s %s", d.Value, d.Error)
		})
	}
}
