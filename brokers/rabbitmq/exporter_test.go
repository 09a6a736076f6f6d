package rabbitmq

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// The testdata is rabbitmq_prometheus 3.10.8's answer to
// /metrics/detailed?family=queue_coarse_metrics&family=queue_consumer_count,
// cut to three queues, one of them named with a quote, a backslash and a
// newline (the exposition escapes them).
func TestParseDetailed(t *testing.T) {
	b, err := os.ReadFile("testdata/detailed-3.10.txt")
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseDetailed(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if d.Node != "rabbit@vm" {
		t.Errorf("node %q, want rabbit@vm", d.Node)
	}
	want := map[QueueKey]Depth{
		{"shop", "orders"}:             {Ready: 12, Unacked: 4, Consumers: 2},
		{"shop", "orders.dlq"}:         {Ready: 3},
		{"/", "say \"hi\"\\now\nthen"}: {Ready: 1},
	}
	if len(d.Queues) != len(want) {
		t.Errorf("%d queues, want %d: %v", len(d.Queues), len(want), d.Queues)
	}
	for k, w := range want {
		if got := d.Queues[k]; got != w {
			t.Errorf("%q/%q: %+v, want %+v", k.VHost, k.Name, got, w)
		}
	}
}

func TestParseDetailedRefusesWhatIsNotThePlugin(t *testing.T) {
	for name, body := range map[string]string{
		"cut short":     "rabbitmq_detailed_queue_messages_ready{vhost=\"v\",queue=\"q\"} 1\n",
		"broken labels": "rabbitmq_detailed_queue_consumers{vhost=\"v\",queue=\"q} 1\n",
		"no value":      "rabbitmq_detailed_queue_consumers{vhost=\"v\",queue=\"q\"}\n",
		"an HTML page":  "<html><body>hello</body></html>\n",
	} {
		t.Run(name, func(t *testing.T) {
			if d, err := parseDetailed(strings.NewReader(body)); err == nil {
				t.Fatalf("parsed %+v, want an error", d)
			}
		})
	}
}

func TestExporterURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://rabbit:15672":        "http://rabbit:15692",
		"https://rabbit.example/":    "https://rabbit.example:15691",
		"http://guest:guest@[::1]:1": "http://[::1]:15692",
	} {
		got, err := ExporterURL(in)
		if err != nil || got != want {
			t.Errorf("ExporterURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestQueueDepthsAsksForTheTwoFamiliesOfTheVHosts(t *testing.T) {
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		http.ServeFile(w, r, "testdata/detailed-3.10.txt")
	}))
	defer srv.Close()
	e, err := NewExporter(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := e.QueueDepths(ctx, []string{"shop", "/"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "family=queue_coarse_metrics&family=queue_consumer_count&vhost=shop&vhost=%2F"; query != want {
		t.Errorf("query %q, want %q", query, want)
	}
	if len(d.Queues) != 3 || e.Requests() != 1 {
		t.Errorf("%d queues in %d requests, want 3 in 1", len(d.Queues), e.Requests())
	}
}

func TestQueueDepthsNotFound(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	e, err := NewExporter(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.QueueDepths(context.Background(), nil)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err %v, want ErrNotFound", err)
	}
}
