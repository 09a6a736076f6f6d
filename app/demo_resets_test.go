package app

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestDemoResetsAStoppedGroup: in the demo, whose Kafka and NATS clusters
// are both named "demo", a reset of the stopped group billing-stopped is
// planned and applied through the API (a cluster is its broker and name:
// the plan is Kafka's, not an ambiguity).
func TestDemoResetsAStoppedGroup(t *testing.T) {
	base := startDemo(t)
	post := func(path, body string) (int, string) {
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	demoPolled(t, base)
	code, body := post("/api/v1/groups/demo/billing-stopped/offsets/plan", `{"to":"earliest"}`)
	if code != http.StatusOK {
		t.Fatalf("plan = %d %s", code, body)
	}
	var plan struct {
		ID string `json:"plan_id"`
	}
	if err := json.Unmarshal([]byte(body), &plan); err != nil || plan.ID == "" {
		t.Fatalf("plan %s: %v", body, err)
	}
	code, body = post("/api/v1/groups/demo/billing-stopped/offsets/apply", `{"plan_id":"`+plan.ID+`"}`)
	if code != http.StatusOK || !strings.Contains(body, `"committed"`) {
		t.Fatalf("apply = %d %s", code, body)
	}
	// A plan for a cluster that is not a Kafka one is the request's fault.
	if code, body := post("/api/v1/groups/nope/billing-stopped/offsets/plan", `{"to":"earliest"}`); code < 400 || code >= 500 {
		t.Errorf("plan on an unknown cluster = %d %s, want a 4xx", code, body)
	}
}
