package app

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestCheckNATS: check connects to each NATS cluster and counts what it
// reads; a cluster nobody answers fails check, naming it.
func TestCheckNATS(t *testing.T) {
	srv := testenv.NATSEmbedded(t)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ORDERS", "AUDIT"} {
		if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := js.CreateOrUpdateConsumer(t.Context(), name, jetstream.ConsumerConfig{Durable: "worker", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
			t.Fatal(err)
		}
	}
	gone := testenv.FreePorts(t, 1)[0]
	yml := fmt.Sprintf(`
nats:
  - name: local
    url: %s
    streams: {exclude: [AUDIT]}
  - name: gone
    url: nats://127.0.0.1:%d
`, srv.ClientURL(), gone)
	cfg, err := config.Parse([]byte(yml), "queuewatch.yml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	err = Check(ctx, cfg, &out, nil)
	if !strings.Contains(out.String(), "ok   nats:local: 1 stream, 1 consumer, 0 DLQs in ") {
		t.Errorf("check output %q lacks the local cluster's line", out.String())
	}
	if err == nil || !strings.Contains(out.String(), "FAIL nats:gone: ") || !strings.Contains(err.Error(), "connect nats://127.0.0.1:") {
		t.Errorf("check: err %v, output %q; want nats:gone to fail to connect", err, out.String())
	}
}

// TestCheckNATSCaptureStreams: check says where a capture stream made
// earlier (by hand or an older version) differs from what capture relies
// on; it is advice, not a failure.
func TestCheckNATSCaptureStreams(t *testing.T) {
	srv := testenv.NATSEmbedded(t)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	dl := config.DefaultNATSDeadLetterStream
	for _, sc := range []jetstream.StreamConfig{
		{Name: dl, Subjects: []string{dl + ".>"}, Duplicates: 2 * time.Minute},
		{Name: dl + "_ADVISORIES", Subjects: []string{"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>"}, Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage},
	} {
		if _, err := js.CreateStream(t.Context(), sc); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Parse(fmt.Appendf(nil, "nats:\n  - name: local\n    url: %s\n    dead_letters: {capture: true}\n", srv.ClientURL()), "queuewatch.yml")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Check(t.Context(), cfg, &out, nil); err != nil {
		t.Fatalf("check: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"     warn: stream " + dl + ": duplicate window 2m0s is shorter than 1h0m0s",
		"     warn: stream " + dl + "_ADVISORIES: subjects do not include $JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.*.*",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, out.String())
		}
	}
}
