package pubsub

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
)

// recordedMonitoring answers projects.timeSeries.list with the files in
// testdata, of the shape Cloud Monitoring's v3 REST reference documents
// (int64Value as a string, points newest first, nextPageToken), and keeps
// each call's filter. No local server answers this API.
func recordedMonitoring(t *testing.T, project string) (*httptest.Server, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var filters []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v3/projects/"+project+"/timeSeries" {
			http.Error(w, `{"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}}`, http.StatusNotFound)
			return
		}
		q := r.URL.Query()
		if q.Get("interval.startTime") == "" || q.Get("interval.endTime") == "" {
			http.Error(w, `{"error": {"code": 400, "message": "interval required", "status": "INVALID_ARGUMENT"}}`, http.StatusBadRequest)
			return
		}
		filter := q.Get("filter")
		mu.Lock()
		filters = append(filters, filter)
		mu.Unlock()
		_, metric, _ := strings.Cut(filter, `pubsub.googleapis.com/subscription/`)
		metric, _, _ = strings.Cut(metric, `"`)
		file := "testdata/" + metric + ".json"
		if tok := q.Get("pageToken"); tok != "" {
			file = "testdata/" + metric + "." + tok + ".json"
		}
		body, err := os.ReadFile(file)
		if err != nil {
			http.Error(w, `{"error": {"code": 400, "message": "no recording", "status": "INVALID_ARGUMENT"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &filters
}

// TestMonitoringReadsRecordedSeries reads the subscription metrics with
// one call per metric (two for the paged one) and takes each series'
// newest point.
func TestMonitoringReadsRecordedSeries(t *testing.T) {
	srv, filters := recordedMonitoring(t, "orders-prod")
	c, err := New(config.PubSub{
		Name: "prod", Project: "orders-prod", Endpoint: "127.0.0.1:1",
		Monitoring: config.PubSubMonitoring{Enabled: true, Endpoint: srv.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.SubscriptionMetrics(t.Context(), time.Date(2026, 12, 7, 15, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	o := got["orders"]
	if o == nil || !o.HasUndelivered || o.Undelivered != 1250 || !o.HasOldestAge || o.OldestAge != 754*time.Second ||
		o.DeadLettered != 3 || o.BacklogBytes != 480000 || !o.At.Equal(time.Date(2026, 12, 7, 14, 57, 0, 0, time.UTC)) {
		t.Errorf("orders = %+v", o)
	}
	if d := got["orders-dlq"]; d == nil || d.Undelivered != 7 || d.HasOldestAge {
		t.Errorf("orders-dlq (second page) = %+v", d)
	}
	if n := c.MonitoringCalls(); n != int64(len(MonitoringMetrics))+1 {
		t.Errorf("%d calls, want one per metric and one more page: %d", n, len(MonitoringMetrics)+1)
	}
	for _, f := range *filters {
		if !strings.Contains(f, `resource.type = "pubsub_subscription"`) {
			t.Errorf("filter %q does not ask for subscriptions only", f)
		}
	}
}

// TestMonitoringError keeps the metrics that were read and names the
// one whose call failed, with the API's message.
func TestMonitoringError(t *testing.T) {
	srv, _ := recordedMonitoring(t, "orders-prod")
	c, _ := New(config.PubSub{
		Name: "prod", Project: "other-project", Endpoint: "127.0.0.1:1",
		Monitoring: config.PubSubMonitoring{Enabled: true, Endpoint: srv.URL},
	})
	_, err := c.SubscriptionMetrics(t.Context(), time.Now())
	if err == nil || !strings.Contains(err.Error(), "subscription/num_undelivered_messages: 404 Not Found NOT_FOUND: not found") {
		t.Errorf("err = %v", err)
	}
}
