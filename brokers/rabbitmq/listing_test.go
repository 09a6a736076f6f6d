package rabbitmq

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// listing serves /api/queues/big of n generated queues, paged as
// RabbitMQ pages (page, page_size) or as one JSON array, and records each
// request's query.
type listing struct {
	n       int
	mu      sync.Mutex
	queries []string
}

func (l *listing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.queries = append(l.queries, r.URL.RawQuery)
	l.mu.Unlock()
	if r.URL.Query().Get("columns") != queueColumns {
		http.Error(w, "columns missing", http.StatusBadRequest)
		return
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page == 0 {
		_, _ = io.Copy(w, newQueueArray(l.n))
		return
	}
	size, _ := strconv.Atoi(r.URL.Query().Get("page_size"))
	lo, hi := (page-1)*size, min(page*size, l.n)
	items := make([]json.RawMessage, 0, hi-lo)
	for i := lo; i < hi; i++ {
		items = append(items, json.RawMessage(queueJSON(i)))
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"items": items, "page": page, "page_count": (l.n + size - 1) / size})
}

func (l *listing) paged() (paged, unpaged int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range l.queries {
		if strings.Contains(q, "page=") {
			paged++
		} else {
			unpaged++
		}
	}
	l.queries = nil
	return paged, unpaged
}

// queueJSON is queue i as the listing's columns show it: every tenth
// dead-letters, every seventh holds messages.
func queueJSON(i int) string {
	args := "{}"
	if i%10 == 0 {
		args = `{"x-dead-letter-exchange":"dlx"}`
	}
	return fmt.Sprintf(`{"name":"q.%05d","vhost":"big","type":"classic","policy":null,"arguments":%s,`+
		`"effective_policy_definition":[],"messages_ready":%d,"messages_unacknowledged":0,"consumers":%d,`+
		`"state":"running","message_stats":{"publish":%d,"ack":0,"deliver_get":0}}`, i, args, i%7, i%3, i)
}

// queueArray generates the JSON array of n queues as it is read, so
// that how far a reader got is how far the decoder read.
type queueArray struct {
	n, next int
	buf     []byte
	read    int64
}

func newQueueArray(n int) *queueArray { return &queueArray{n: n, buf: []byte("[")} }

func (a *queueArray) Read(p []byte) (int, error) {
	for len(a.buf) == 0 {
		switch {
		case a.next > a.n:
			return 0, io.EOF
		case a.next == a.n:
			a.buf = []byte("]")
		case a.next == 0:
			a.buf = []byte(queueJSON(0))
		default:
			a.buf = []byte("," + queueJSON(a.next))
		}
		a.next++
	}
	n := copy(p, a.buf)
	a.buf = a.buf[n:]
	a.read += int64(n)
	return n, nil
}

func TestQueuesUnpagedOnceTheSizeIsKnown(t *testing.T) {
	const n = 10_000
	l := &listing{n: n}
	srv := httptest.NewServer(l)
	defer srv.Close()
	c, err := NewClient(srv.URL, "u", "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := c.Queues(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if p, u := l.paged(); p != n/pageSize || u != 0 {
		t.Errorf("first listing: %d paged and %d unpaged requests, want %d and 0", p, u, n/pageSize)
	}
	second, err := c.Queues(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if p, u := l.paged(); p != 0 || u != 1 {
		t.Errorf("second listing: %d paged and %d unpaged requests, want one unpaged", p, u)
	}
	if len(first) != n || len(second) != n {
		t.Fatalf("%d and %d queues, want %d", len(first), len(second), n)
	}
	for i := range first {
		a, b := first[i], second[i]
		if a.Name != b.Name || *a.Ready != *b.Ready || *a.Consumers != *b.Consumers ||
			a.Stats.Publish != b.Stats.Publish || len(a.Arguments) != len(b.Arguments) {
			t.Fatalf("queue %d: paged %+v, unpaged %+v", i, a, b)
		}
	}
	if q := second[7]; *q.Ready != 0 || *q.Consumers != 1 || q.Stats.Publish != 7 {
		t.Errorf("q.00007 %+v", q)
	}
}

func TestQueuesPagedAboveUnpagedMax(t *testing.T) {
	l := &listing{n: 1200}
	srv := httptest.NewServer(l)
	defer srv.Close()
	c, err := NewClient(srv.URL, "u", "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.UnpagedMax = 1000
	for range 2 {
		qs, err := c.Queues(context.Background(), "big")
		if err != nil || len(qs) != 1200 {
			t.Fatalf("%d queues, %v", len(qs), err)
		}
		if p, u := l.paged(); p != 3 || u != 0 {
			t.Errorf("%d paged and %d unpaged requests, want 3 pages", p, u)
		}
	}
}

// TestDecodeQueuesStreams checks that a queue is handed over when the
// decoder has read a small part of a 10,000-queue body, so that the body
// is never held whole.
func TestDecodeQueuesStreams(t *testing.T) {
	body := newQueueArray(10_000)
	var atFirst int64
	var got int
	err := decodeQueues(json.NewDecoder(body), func(q Queue) {
		if got == 0 {
			atFirst = body.read
		}
		got++
	})
	if err != nil || got != 10_000 {
		t.Fatalf("%d queues, %v", got, err)
	}
	if atFirst > 64<<10 || body.read < 2<<20 {
		t.Errorf("read %d bytes when the first queue came and %d in all, want under 64 KB of over 2 MB", atFirst, body.read)
	}
}

func TestDecodeQueuesErrors(t *testing.T) {
	for body, want := range map[string]string{
		`[{"name":"a"},{"name":`: "unexpected EOF",
		`{"items":[]}`:           "want a JSON array of queues",
		`[{"name":7}]`:           "cannot unmarshal number",
	} {
		err := decodeQueues(json.NewDecoder(strings.NewReader(body)), func(Queue) {})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", body, err, want)
		}
	}
}

// TestQueuesUnpagedDeduplicates keeps one of a queue listed twice, as
// pages do when the list shifts under them.
func TestQueuesUnpagedDeduplicates(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") != "" {
			_, _ = w.Write([]byte(`{"items":[{"name":"a","vhost":"v"}],"page":1,"page_count":1}`))
			return
		}
		_, _ = w.Write([]byte(`[{"name":"a","vhost":"v"},{"name":"b","vhost":"v"},{"name":"a","vhost":"v"}]`))
	}))
	defer srv.Close()
	c, _ := NewClient(srv.URL, "u", "p", nil)
	if _, err := c.Queues(context.Background(), "v"); err != nil {
		t.Fatal(err)
	}
	qs, err := c.Queues(context.Background(), "v")
	if err != nil || len(qs) != 2 || qs[0].Name != "a" || qs[1].Name != "b" {
		t.Errorf("queues %+v, %v; want a and b", qs, err)
	}
}
