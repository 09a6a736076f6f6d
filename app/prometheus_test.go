package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// deadLettered makes a vhost whose queue orders dead-letters n messages
// into orders.dlq.
func deadLettered(t *testing.T, n int) string {
	t.Helper()
	vh := testenv.Rabbit(t).VHost("prom")
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprint(i), Body: []byte("{}")}
	}
	testenv.DeadLetter(t, testenv.Channel(t, vh), "orders", "orders.dlq", msgs...)
	return vh
}

// alertState reads Prometheus's /api/v1/alerts and returns the state of the
// QueuewatchDLQNotEmpty alert for vhost, or "" when there is none.
func alertState(t *testing.T, promURL, vhost string) string {
	t.Helper()
	resp, err := http.Get(promURL + "/api/v1/alerts")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return ""
	}
	for _, a := range out.Data.Alerts {
		if a.Labels["alertname"] == "QueuewatchDLQNotEmpty" && a.Labels["vhost"] == vhost && a.Labels["dlq"] == "orders.dlq" {
			return a.State
		}
	}
	return ""
}

// TestPrometheusDLQAlert runs the real Prometheus server against a running
// queuewatch watching a real RabbitMQ DLQ: QueuewatchDLQNotEmpty fires from
// the committed rule file, and resolves once a replay empties the DLQ.
func TestPrometheusDLQAlert(t *testing.T) {
	testenv.Slow(t, "a real Prometheus server")
	promBin, err := exec.LookPath("prometheus")
	testenv.Require(t, "prometheus (Debian package prometheus)", err)
	vh := deadLettered(t, 2)

	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.PollInterval, cfg.PollTimeout = time.Second, time.Second
	cfg.RabbitMQ = []config.RabbitMQ{{
		Name: "main", URL: "amqp://guest:guest@127.0.0.1:5672/",
		ManagementURL: "http://127.0.0.1:15672", VHosts: []string{vh},
	}}
	r := start(t, cfg)

	rules, err := filepath.Abs("../prometheus/rules/queuewatch.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	promCfg := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: queuewatch
    static_configs: [{targets: [%q]}]
`, rules, r.base[len("http://"):])
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(promCfg), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePorts(t, 1)[0])
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, promBin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr)
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	promURL := "http://" + promAddr

	// The rule has `for: 30s`: pending first, firing after.
	waitFor(t, 90*time.Second, "QueuewatchDLQNotEmpty to fire", func() bool {
		return alertState(t, promURL, vh) == "firing"
	}, &logs)

	// Replay through queuewatch's own API, as the UI does.
	id := "rabbitmq:main:" + vh + ":orders.dlq"
	job := replayViaAPI(t, r.base, id)
	waitFor(t, 30*time.Second, "the replay job to finish", func() bool {
		_, body := r.get(t, "/api/v1/replays/"+url.PathEscape(job)+"?outcomes=false")
		return strings.Contains(body, `"state":"succeeded"`)
	}, &logs)
	waitFor(t, 30*time.Second, "QueuewatchDLQNotEmpty to resolve", func() bool {
		return alertState(t, promURL, vh) == ""
	}, &logs)
	_, metrics := r.get(t, "/metrics")
	want := `queuewatch_dlq_replayed_messages_total{broker="rabbitmq",cluster="main",dlq="orders.dlq",result="ok",source="orders",vhost="` + vh + `"} 2`
	if !strings.Contains(metrics, want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

// replayViaAPI starts a replay of the whole DLQ with POST
// /api/v1/dlqs/{id}/replay as a script does (auth mode none on loopback,
// no token, no Origin) and returns the job id.
func replayViaAPI(t *testing.T, base, id string) string {
	t.Helper()
	body := `{"action":"replay","selection":{"all":true},"rate":-1}`
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost,
		base+"/api/v1/dlqs/"+url.PathEscape(id)+"/replay", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Job dlqreplay.Job `json:"job"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(raw, &out) != nil || out.Job.ID == "" {
		t.Fatalf("POST replay: %s %s", resp.Status, raw)
	}
	return out.Job.ID
}

// syncBuffer is a bytes.Buffer the prometheus process writes to while the
// test may read it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool, logs *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; prometheus said:\n%s", d, what, logs.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
}
