package rabbitmq

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// The files in testdata were recorded from RabbitMQ 3.10.8 with
// page_size=3, so the five queues of vhost qw-record span two pages
// (queues.json is the two pages' items as the unpaged listing sends them):
//
//	events      stream, created seconds before: no statistics yet
//	fresh       quorum, created just before: no statistics yet
//	orders      dead-letters to topic exchange dlx, no routing key; bound
//	            to exchange shop with order.created
//	orders.dlq  bound to dlx with order.# and holding one dead letter
//	plain       policy ttl, head_message_timestamp 1700000000
const recordedVHost = "qw-record"

// fakeAPI serves recorded management responses; override replaces the
// answer for one escaped path (and page).
type fakeAPI struct {
	t        *testing.T
	mu       sync.Mutex
	override map[string]func(w http.ResponseWriter)
	paths    []string
}

func newFakeAPI(t *testing.T) (*fakeAPI, *httptest.Server) {
	f := &fakeAPI{t: t, override: map[string]func(http.ResponseWriter){}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeAPI) set(key string, h func(w http.ResponseWriter)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.override[key] = h
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.URL.EscapedPath()
	if p := r.URL.Query().Get("page"); p != "" {
		key += "?page=" + p
	}
	f.mu.Lock()
	f.paths = append(f.paths, key)
	h := f.override[key]
	f.mu.Unlock()
	if h != nil {
		h(w)
		return
	}
	if u, p, _ := r.BasicAuth(); u != "guest" || p != "guest" {
		serveFile(f.t, w, http.StatusUnauthorized, "unauthorized.json")
		return
	}
	files := map[string]string{
		"/api/overview":                                "overview.json",
		"/api/vhosts":                                  "vhosts.json",
		"/api/queues/qw-record?page=1":                 "queues-page1.json",
		"/api/queues/qw-record?page=2":                 "queues-page2.json",
		"/api/queues/qw-record?page=3":                 "page-out-of-range.json",
		"/api/queues/qw-record":                        "queues.json",
		"/api/exchanges":                               "exchanges.json",
		"/api/exchanges/qw-record":                     "exchanges.json",
		"/api/exchanges/qw-record/dlx/bindings/source": "dlx-bindings.json",
		"/api/queues/qw-record/orders/bindings":        "orders-bindings.json",
		"/api/bindings/qw-record":                      "bindings.json",
	}
	name, ok := files[key]
	if !ok {
		http.Error(w, `{"error":"Object Not Found","reason":"Not Found"}`, http.StatusNotFound)
		return
	}
	code := http.StatusOK
	if strings.Contains(name, "out-of-range") {
		code = http.StatusBadRequest
	}
	serveFile(f.t, w, code, name)
}

func serveFile(t *testing.T, w http.ResponseWriter, code int, name string) {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Errorf("testdata: %v", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// closedAMQP is an AMQP URL on which nothing listens: DLQ depths then fall
// back to the management numbers, marked with an error.
func closedAMQP(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "amqp://guest:guest@" + addr + "/"
}

func fakeSource(t *testing.T, srv *httptest.Server, cfg config.RabbitMQ, opts Options) *Source {
	t.Helper()
	cfg.URL = closedAMQP(t)
	cfg.ManagementURL = srv.URL
	opts.Cluster = access(t, cfg)
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func pollErr(s *Source) (*queue.Snapshot, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Poll(ctx)
}

func TestRecordedResponses(t *testing.T) {
	f, srv := newFakeAPI(t)
	s := fakeSource(t, srv, config.RabbitMQ{}, Options{})
	s.now = func() time.Time { return time.Unix(1700000090, 0) }
	snap, err := pollErr(s)
	if err != nil {
		t.Fatal(err)
	}

	var names []string
	for _, q := range snap.Queues {
		names = append(names, q.Name)
	}
	if want := []string{"events", "fresh", "orders", "orders.dlq", "plain"}; !slices.Equal(names, want) {
		t.Fatalf("queues %v, want %v", names, want)
	}
	plain, _ := findQueue(snap, recordedVHost, "plain")
	if !plain.HasHeadAge || plain.HeadMessageAge != 90*time.Second || plain.Policy != "ttl" || plain.Ready != 1 {
		t.Errorf("plain: %+v", plain)
	}
	fresh, _ := findQueue(snap, recordedVHost, "fresh")
	if fresh.Type != "quorum" || fresh.Ready != 0 || fresh.HasHeadAge {
		t.Errorf("fresh (no statistics yet): %+v", fresh)
	}
	orders, _ := findQueue(snap, recordedVHost, "orders")
	if !orders.HasDeadLetter || orders.DeadLetterExchange != "dlx" || orders.Arguments["x-dead-letter-exchange"] != "dlx" {
		t.Errorf("orders: %+v", orders)
	}

	if len(snap.DLQs) != 1 {
		t.Fatalf("DLQs %+v, want orders.dlq only", snap.DLQs)
	}
	d := snap.DLQs[0]
	if d.Name != "orders.dlq" || d.Detection != queue.DetectedTopology || !slices.Equal(d.Sources, []string{"orders"}) {
		t.Errorf("DLQ %+v", d)
	}
	// AMQP is down: the management depth stands in, marked.
	if d.Messages != 1 || !strings.Contains(d.Err, "exact depth unavailable") {
		t.Errorf("DLQ depth %d err %q, want 1 from management, marked", d.Messages, d.Err)
	}
	if len(snap.Partial) != 1 || !strings.Contains(snap.Partial[0], "amqp") {
		t.Errorf("partial %v, want the amqp failure", snap.Partial)
	}

	// The version (first poll only), vhosts, two pages, exchanges, and the
	// DLX's and the source's bindings (orders has no dead-letter routing
	// key).
	want := []string{
		"/api/overview", "/api/vhosts", "/api/queues/qw-record?page=1", "/api/queues/qw-record?page=2",
		"/api/exchanges/qw-record", "/api/exchanges/qw-record/dlx/bindings/source",
		"/api/queues/qw-record/orders/bindings",
	}
	if !slices.Equal(f.paths, want) || s.HTTPRequests() != int64(len(want)) {
		t.Errorf("requests %v (%d), want %v", f.paths, s.HTTPRequests(), want)
	}
}

// TestRecordedResponsesUnpaged polls twice: the second poll knows the
// vhost's size and lists it in one request, and sees the same queues and
// DLQs as the paged first poll.
func TestRecordedResponsesUnpaged(t *testing.T) {
	f, srv := newFakeAPI(t)
	s := fakeSource(t, srv, config.RabbitMQ{}, Options{})
	s.now = func() time.Time { return time.Unix(1700000090, 0) }
	first, err := pollErr(s)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.paths = nil
	f.mu.Unlock()
	second, err := pollErr(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/api/vhosts", "/api/queues/qw-record", "/api/exchanges/qw-record",
		"/api/exchanges/qw-record/dlx/bindings/source", "/api/queues/qw-record/orders/bindings",
	}
	slices.Sort(want)
	slices.Sort(f.paths) // the listing and the exchanges are read concurrently
	if !slices.Equal(f.paths, want) {
		t.Errorf("second poll's requests %v, want %v", f.paths, want)
	}
	type seen struct {
		name, typ            string
		ready, unacked, cons int64
		deadLetter, headAge  bool
	}
	view := func(snap *queue.Snapshot) (out []seen) {
		for _, q := range snap.Queues {
			out = append(out, seen{q.Name, q.Type, q.Ready, q.Unacked, int64(q.Consumers), q.HasDeadLetter, q.HasHeadAge})
		}
		return out
	}
	if a, b := view(first), view(second); !slices.Equal(a, b) || len(a) != 5 {
		t.Errorf("paged %+v\nunpaged %+v", a, b)
	}
	if len(second.DLQs) != 1 || second.DLQs[0].Name != "orders.dlq" || second.DLQs[0].Messages != first.DLQs[0].Messages ||
		!slices.Equal(second.DLQs[0].Sources, first.DLQs[0].Sources) {
		t.Errorf("DLQs %+v, want %+v", second.DLQs, first.DLQs)
	}
}

func TestManagementErrors(t *testing.T) {
	status := func(code int, body string) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.WriteHeader(code)
			_, _ = w.Write([]byte(body))
		}
	}
	tests := []struct {
		name     string
		key      string
		answer   func(http.ResponseWriter)
		password string
		wantErr  string // "" = the poll succeeds
		check    func(t *testing.T, snap *queue.Snapshot)
	}{
		{
			name: "page out of range after deletes",
			key:  "/api/queues/qw-record?page=2",
			answer: status(http.StatusBadRequest,
				`{"error":"page_out_of_range","reason":"Page out of range, page: 2 page size: 500, len: 3"}`),
			check: func(t *testing.T, snap *queue.Snapshot) {
				if len(snap.Queues) != 3 {
					t.Errorf("%d queues, want page 1's 3", len(snap.Queues))
				}
			},
		},
		{
			name:    "server error",
			key:     "/api/queues/qw-record?page=1",
			answer:  status(http.StatusInternalServerError, `{"error":"internal_server_error","reason":"boom"}`),
			wantErr: "/api/queues/qw-record: 500 internal server error: internal_server_error: boom",
		},
		{
			name:    "html error page",
			key:     "/api/vhosts",
			answer:  status(http.StatusBadGateway, "<html><body>bad gateway</body></html>"),
			wantErr: "502 bad gateway: <html><body>bad gateway</body></html>",
		},
		{
			name:    "malformed JSON",
			key:     "/api/queues/qw-record?page=2",
			answer:  status(http.StatusOK, `{"items":[{"name":"x",`),
			wantErr: "management API " + "URL" + "/api/queues/qw-record: decode: unexpected end of JSON input",
		},
		{
			name:    "wrong type",
			key:     "/api/vhosts",
			answer:  status(http.StatusOK, `{"name":"/"}`),
			wantErr: "decode: json: cannot unmarshal object",
		},
		{
			name:     "wrong credentials",
			password: "wrong",
			wantErr:  "rabbitmq main: management API URL/api/vhosts: 401 unauthorized: check management_username/password",
		},
		{
			name:    "not a monitoring user",
			key:     "/api/vhosts",
			answer:  status(http.StatusForbidden, `{"error":"not_authorised","reason":"Not management user"}`),
			wantErr: "403 forbidden: the management user needs the monitoring tag",
		},
		{
			name:   "missing fields and empty lists for objects",
			key:    "/api/queues/qw-record?page=1",
			answer: status(http.StatusOK, `{"items":[{"name":"bare","vhost":"qw-record","arguments":[],"effective_policy_definition":[]},{"name":"n","vhost":"qw-record","arguments":null,"messages_ready":null}],"page":1,"page_count":1}`),
			check: func(t *testing.T, snap *queue.Snapshot) {
				if len(snap.Queues) != 2 || snap.Queues[0].Name != "bare" || snap.Queues[0].Ready != 0 || snap.Queues[0].Arguments != nil {
					t.Errorf("queues %+v", snap.Queues)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeAPI(t)
			if tt.key != "" {
				f.set(tt.key, tt.answer)
			}
			pw := tt.password
			if pw == "" {
				pw = "guest"
			}
			s := fakeSource(t, srv, config.RabbitMQ{ManagementUsername: "guest", ManagementPassword: pw}, Options{})
			snap, err := pollErr(s)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("poll: %v", err)
				}
				tt.check(t, snap)
				return
			}
			want := strings.ReplaceAll(tt.wantErr, "URL", srv.URL)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want it to contain %q", err, want)
			}
			if strings.Contains(tt.name, "credentials") || strings.Contains(tt.name, "monitoring") {
				if !errors.Is(err, rabbit.ErrUnauthorized) {
					t.Errorf("errors.Is(%v, rabbit.ErrUnauthorized) = false", err)
				}
			}
		})
	}
}

// TestPathEscaping checks that every segment is escaped on the wire, so
// the broker sees the vhost and queue names as they are.
func TestPathEscaping(t *testing.T) {
	f, srv := newFakeAPI(t)
	vh := "a b%/c"
	f.set("/api/queues/a%20b%25%2Fc?page=1", func(w http.ResponseWriter) {
		_, _ = w.Write([]byte(`{"items":[{"name":"q/1 ☃","vhost":"a b%/c","arguments":{"x-dead-letter-exchange":"x/y z"}}],"page":1,"page_count":1}`))
	})
	f.set("/api/exchanges/a%20b%25%2Fc", func(w http.ResponseWriter) {
		_, _ = w.Write([]byte(`[{"name":"x/y z","vhost":"a b%/c","type":"fanout","arguments":{}}]`))
	})
	f.set("/api/exchanges/a%20b%25%2Fc/x%2Fy%20z/bindings/source", func(w http.ResponseWriter) {
		_, _ = w.Write([]byte(`[{"source":"x/y z","vhost":"a b%/c","destination":"d/%","destination_type":"queue","routing_key":""}]`))
	})
	s := fakeSource(t, srv, config.RabbitMQ{}, Options{VHosts: []string{vh}})
	snap, err := pollErr(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Queues) != 1 || snap.Queues[0].Name != "q/1 ☃" || snap.Queues[0].VHost != vh {
		t.Errorf("queues %+v", snap.Queues)
	}
	want := []string{"/api/overview", "/api/queues/a%20b%25%2Fc?page=1", "/api/exchanges/a%20b%25%2Fc", "/api/exchanges/a%20b%25%2Fc/x%2Fy%20z/bindings/source"}
	if !slices.Equal(f.paths, want) {
		t.Errorf("paths %v, want %v", f.paths, want)
	}
}

func TestAMQPOnlyNeedsQueues(t *testing.T) {
	s, err := New(Options{Cluster: access(t, config.RabbitMQ{URL: closedAMQP(t)})})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := pollErr(s); err == nil || !strings.Contains(err.Error(), "nothing to measure") {
		t.Errorf("error %v, want nothing to measure", err)
	}
	if _, err := rabbit.New(config.RabbitMQ{Name: "main", URL: "http://x"}); err == nil {
		t.Error("New accepted an http:// AMQP URL")
	}
	if _, err := rabbit.New(config.RabbitMQ{Name: "main", URL: testenv.DefaultAMQPURL, ManagementURL: "ftp://x"}); err == nil {
		t.Error("New accepted an ftp:// management URL")
	}
}
