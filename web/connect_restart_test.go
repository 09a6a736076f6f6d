package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/offsets"
	offsetskafka "github.com/queuewatch/queuewatch/offsets/kafka"
	"github.com/queuewatch/queuewatch/store"
)

// fakeConnect answers restarts as Connect 4.4 does (202 with the states the
// restart left, KIP-745) and records the requests; answer overrides the
// status it gives.
type fakeConnect struct {
	mu       sync.Mutex
	requests []string
	answer   int
}

// answerWith makes Connect answer every request with status.
func (f *fakeConnect) answerWith(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answer = status
}

// seen are the requests Connect saw.
func (f *fakeConnect) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string{}, f.requests...)
}

func (f *fakeConnect) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
	answer := f.answer
	f.mu.Unlock()
	switch answer {
	case http.StatusConflict:
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"error_code": 409, "message": "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"}`))
	default:
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"name": "x", "connector": {"state": "RUNNING", "worker_id": "w"}, "tasks": [{"id": 0, "state": "RUNNING"}, {"id": 1, "state": "RESTARTING"}], "type": "sink"}`))
	}
}

// resetService is app's reset service: the offsets service over a store,
// which lists the log.
type resetService struct {
	*offsets.Service
	st *store.Store
}

func (r resetService) Resets(ctx context.Context, q store.ResetQuery) ([]store.OffsetReset, error) {
	return r.st.FindOffsetResets(ctx, q)
}

// restartServer is a server whose Kafka cluster "prod" (kfake) has the
// Connect cluster "main" (fc) and connectServer's connectors, with basic
// auth (alice operates, victor views) and the reset service over a store.
func restartServer(t *testing.T) (*Server, *fakeConnect) {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	fc := &fakeConnect{}
	connect := httptest.NewServer(fc)
	t.Cleanup(connect.Close)
	cluster, err := brokerkafka.New(config.Kafka{Name: "prod", Brokers: kc.ListenAddrs(), Connect: []config.Connect{{Name: "main", URL: connect.URL}}},
		config.DLQ{KafkaCursorGroup: config.DefaultKafkaCursorGroup})
	if err != nil {
		t.Fatal(err)
	}
	resets, err := offsetskafka.New(cluster)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(resets.Close)
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	// The replay service shares the audit store, as in serve.
	dlqs, err := dlqreplay.New(dlqreplay.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dlqs.Close)
	return New(Options{
		Monitor: connectServer().opts.Monitor, Metrics: http.NotFoundHandler(), Auth: authConfig(t, config.AuthBasic), DLQs: dlqs,
		Offsets: resetService{offsets.NewService([]offsets.Broker{resets}, store.ResetStore{S: st}, nil), st},
	}), fc
}

// TestConnectorRestart: an operator's restart of a failed connector goes
// to Connect as a restart of its failed tasks only, answers the states
// Connect gave, and is in the audit feed as a restart of that connector,
// failures included; a viewer is refused, the page offers the restart only
// where a task failed, and a connector queuewatch does not list is 404.
func TestConnectorRestart(t *testing.T) {
	s, fc := restartServer(t)
	alice := basic("alice", "wonderland")
	api := "/api/v1/kafka/connectors/prod/main/" + url.PathEscape(connectHostile) + "/restart"

	if rec := send(s, "POST", api, basic("victor", "viewer-pw")); rec.Code != http.StatusForbidden {
		t.Errorf("a viewer's restart: %d %s, want 403", rec.Code, rec.Body)
	}
	if len(fc.seen()) != 0 {
		t.Fatalf("Connect saw %v for a refused restart", fc.seen())
	}
	rec := send(s, "POST", api, alice)
	var got offsets.RestartState
	if err := json.Unmarshal(rec.Body.Bytes(), &got); rec.Code != http.StatusOK || err != nil {
		t.Fatalf("restart: %d %s", rec.Code, rec.Body)
	}
	if !got.Restarted || got.Tasks[1] != "RESTARTING" || got.Tasks[0] != "RUNNING" {
		t.Errorf("restart answered %+v, want task 1 restarting and task 0 running", got)
	}
	want := "POST /connectors/" + url.PathEscape(connectHostile) + "/restart?includeTasks=true&onlyFailed=true"
	if seen := fc.seen(); len(seen) != 1 || seen[0] != want {
		t.Errorf("Connect saw %v, want one %s", seen, want)
	}

	fc.answerWith(http.StatusConflict)
	if rec := send(s, "POST", api, alice); rec.Code != http.StatusBadGateway || !strings.Contains(rec.Body.String(), "409 Conflict: Cannot complete request momentarily") {
		t.Errorf("a restart during a rebalance: %d %s, want 502 with Connect's reason", rec.Code, rec.Body)
	}
	if rec := send(s, "POST", "/api/v1/kafka/connectors/prod/main/nobody/restart", alice); rec.Code != http.StatusNotFound {
		t.Errorf("restart of an unknown connector: %d, want 404", rec.Code)
	}

	rec = send(s, "GET", "/api/v1/audit?action=restart", alice)
	var feed struct {
		Events []struct{ Who, Action, Object, Result string } `json:"events"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &feed); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("audit: %d %s", rec.Code, rec.Body)
	}
	object := "kafka:prod:main:" + connectHostile
	if len(feed.Events) != 2 || feed.Events[0].Result != "failed" || feed.Events[1].Result != "restarted" ||
		feed.Events[1].Who != "alice" || feed.Events[1].Object != object {
		t.Errorf("audit feed %+v, want alice's restart of %s, then the failed one", feed.Events, object)
	}

	failed := send(s, "GET", "/kafka/prod/connect/main/connectors/"+url.PathEscape(connectHostile), alice).Body.String()
	running := send(s, "GET", "/kafka/prod/connect/main/connectors/payments-sink", alice).Body.String()
	asViewer := send(s, "GET", "/kafka/prod/connect/main/connectors/"+url.PathEscape(connectHostile), basic("victor", "viewer-pw")).Body.String()
	if !strings.Contains(failed, "data-restart-open") || !strings.Contains(failed, `data-api="`+api+`"`) {
		t.Error("the failed connector's page offers no restart to an operator")
	}
	if strings.Contains(running, "data-restart-open") || strings.Contains(asViewer, "data-restart-open") {
		t.Error("a restart is offered for a running connector, or to a viewer")
	}
	if jobs := send(s, "GET", "/replays", alice).Body.String(); !strings.Contains(jobs, `href="/kafka/prod/connect/main/connectors/`) {
		t.Error("the replays page's log does not link the restart to the connector's page")
	}
}
