package nats

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// realBinary finds a pinned binary in the module's .cache/bin.
func realBinary(t *testing.T, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for ; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if dir == filepath.Dir(dir) {
			t.Fatal("no go.mod above the test")
		}
	}
	p := filepath.Join(dir, ".cache", "bin", name)
	_, err = os.Stat(p)
	testenv.Require(t, name, err)
	return p
}

// natsCLI runs the nats CLI against url and returns its output.
func natsCLI(t *testing.T, cli, url string, args ...string) string {
	t.Helper()
	out, err := exec.Command(cli, append([]string{"-s", url}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("nats %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// A real nats-server process, driven by the nats CLI: a pull consumer
// with max_deliver 3 whose client naks every delivery dead-letters exactly
// 10 of 10 messages in 30 fetches; queuewatch captures the 10 and replays
// them, and the CLI reads the replayed copies back.
func TestRealServerAndCLI(t *testing.T) {
	testenv.Slow(t, "a nats-server process")
	srvBin, cli := realBinary(t, "nats-server-v2.15.3"), realBinary(t, "nats-v0.5.0")
	port := testenv.FreePorts(t, 1)[0]
	srv := exec.Command(srvBin, "-js", "-sd", t.TempDir(), "-a", "127.0.0.1", "-p", strconv.Itoa(port))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	url := "nats://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("nats-server did not start")
		}
	}

	cl, err := brokernats.New(config.NATS{Name: "real", URL: url, DeadLetters: config.NATSDeadLetters{Capture: true, Stream: "QW_DL"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { cl.RunCapture(ctx, slog.New(slog.DiscardHandler)); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	natsCLI(t, cli, url, "stream", "add", "ORDERS", "--subjects", "orders", "--storage", "file", "--defaults")
	natsCLI(t, cli, url, "consumer", "add", "ORDERS", "worker", "--pull", "--max-deliver", "3", "--ack", "explicit", "--defaults")
	natsCLI(t, cli, url, "pub", "orders", `{"n":{{Count}}}`, "--count", "10")
	// Capture's streams must exist before the advisories are published.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, err := exec.Command(cli, "-s", url, "stream", "ls", "-n").CombinedOutput()
		if err == nil && strings.Contains(string(out), "QW_DL_ADVISORIES") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("capture streams never appeared: %s", out)
		}
	}
	natsCLI(t, cli, url, "consumer", "next", "ORDERS", "worker", "--nak", "--count", "30")
	// The server notices max_deliver at the next pull, which finds nothing.
	_ = exec.Command(cli, "-s", url, "consumer", "next", "ORDERS", "worker", "--count", "1", "--timeout", "500ms").Run()

	nc, js, err := cl.Connect(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var dlqs []queue.DLQ
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if dlqs, err = cl.DeadLetterQueues(context.Background(), js, nil); err != nil {
			t.Fatal(err)
		}
		if len(dlqs) == 1 && dlqs[0].Messages == 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dlqs %+v, want worker with 10", dlqs)
		}
	}
	if dlqs[0].Name != "ORDERS.worker" || dlqs[0].Sources[0] != "ORDERS" {
		t.Fatalf("dlq %+v", dlqs[0])
	}

	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	be, err := New(Options{Cluster: cl})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := dlqreplay.New(dlqreplay.Options{Store: st, Backends: []dlqreplay.Backend{be}})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	r, err := svc.Run(context.Background(), dlqreplay.Request{DLQ: dlqs[0].ID(), Selection: dlqreplay.Selection{All: true}})
	if err != nil || r.Job.Progress.Moved != 10 {
		t.Fatalf("replay: %v %+v", err, r.Job)
	}

	var info struct {
		State struct {
			Messages uint64 `json:"messages"`
		} `json:"state"`
	}
	if err := json.Unmarshal([]byte(natsCLI(t, cli, url, "stream", "info", "ORDERS", "-j")), &info); err != nil {
		t.Fatal(err)
	}
	if info.State.Messages != 20 {
		t.Fatalf("ORDERS holds %d messages, want 10 originals and 10 replayed copies", info.State.Messages)
	}
	var got struct {
		Data string `json:"data"`
		Hdrs string `json:"hdrs"`
	}
	if err := json.Unmarshal([]byte(natsCLI(t, cli, url, "stream", "get", "ORDERS", "11", "-j")), &got); err != nil {
		t.Fatal(err)
	}
	hdrs, err1 := base64.StdEncoding.DecodeString(got.Hdrs)
	data, err2 := base64.StdEncoding.DecodeString(got.Data)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(hdrs), queue.HeaderReplayCount+": 1") || string(data) != `{"n":1}` {
		t.Fatalf("replayed copy: headers %q, body %q", hdrs, data)
	}
	if dlqs, _ := cl.DeadLetterQueues(context.Background(), js, nil); len(dlqs) != 0 {
		t.Fatalf("dlqs after the replay: %+v", dlqs)
	}
}
