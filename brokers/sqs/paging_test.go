package sqs

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/queuewatch/queuewatch/config"
)

// TestSQSListFollowsNextToken: SQS pages ListQueues at MaxResults and
// answers a NextToken while names remain; ElasticMQ and moto ignore
// MaxResults, so this edge is checked against a server that answers the
// way the SQS API reference says (JSON protocol, two pages): every page is
// read, each request asks for 1,000 names with the prefix, and the token
// is sent back.
func TestSQSListFollowsNextToken(t *testing.T) {
	pages := map[string]struct {
		urls []string
		next string
	}{
		"":   {[]string{"https://sqs/1/orders-a", "https://sqs/1/orders-b"}, "t1"},
		"t1": {[]string{"https://sqs/1/orders-c"}, ""},
	}
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") != "AmazonSQS.ListQueues" {
			http.Error(w, `{"__type":"InvalidAction"}`, http.StatusBadRequest)
			return
		}
		var in struct {
			MaxResults      int
			NextToken       string
			QueueNamePrefix string
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.MaxResults != 1000 || in.QueueNamePrefix != "orders" {
			http.Error(w, `{"__type":"InvalidParameterValue"}`, http.StatusBadRequest)
			return
		}
		mu.Lock()
		asked = append(asked, in.NextToken)
		mu.Unlock()
		p := pages[in.NextToken]
		out := map[string]any{"QueueUrls": p.urls}
		if p.next != "" {
			out["NextToken"] = p.next
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_ = json.NewEncoder(w).Encode(out)
	}))
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	c, err := New(config.SQS{Name: "paged", Region: "eu-west-1", Endpoint: srv.URL, Queues: config.SQSQueues{Prefix: "orders"}})
	if err != nil {
		t.Fatal(err)
	}
	urls, err := c.ListQueueURLs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://sqs/1/orders-a", "https://sqs/1/orders-b", "https://sqs/1/orders-c"}
	if !slices.Equal(urls, want) || !slices.Equal(asked, []string{"", "t1"}) {
		t.Errorf("listed %v asking with tokens %q; want %v asking \"\" then t1", urls, asked, want)
	}
	if n := c.Requests()["ListQueues"]; n != 2 {
		t.Errorf("counted %d ListQueues requests, want 2", n)
	}
}
