package realkafka

import (
	"bufio"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/offsets"
)

// TestStreamsGroupResetRefused: a Kafka Streams application's streams
// group (KIP-1071) is unknown to DescribeGroups and ConsumerGroupDescribe
// alike; a reset of it as a consumer group must be refused at plan,
// naming its type, not planned as a Dead group while the application
// runs (and after it stopped: a commit alone would leave its state behind).
func TestStreamsGroupResetRefused(t *testing.T) {
	e := newEnv(t, testenv.KafkaVersion)
	app := testenv.Unique("streams")
	stop := runCountApp(t, e.node.Addr(), app, e.topic)
	plan := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := offsets.MakePlan(ctx, e.resets, offsets.Request{Group: app, To: offsets.Spec{Kind: offsets.Earliest}, Topics: []offsets.TopicScope{{Topic: e.topic}}}, time.Now())
		return err
	}
	if err := plan(); !errors.Is(err, offsets.ErrScope) || !strings.Contains(err.Error(), "is a streams group") {
		t.Errorf("running streams group planned as a consumer group: %v", err)
	}
	stop()
	if err := plan(); !errors.Is(err, offsets.ErrScope) || !strings.Contains(err.Error(), "is a streams group") {
		t.Errorf("stopped streams group planned as a consumer group: %v", err)
	}
}

// runCountApp starts the kafka-streams framework program (CountApp, with
// group.protocol=streams) as application id app on input, waits until it
// runs, and returns what stops it.
func runCountApp(t *testing.T, addr, app, input string) (stop func()) {
	t.Helper()
	fw := testenv.RealFramework(t, "kafka-streams")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd := fw.Command(ctx, "io.queuewatch.frameworks.CountApp", addr, app, input, app+"-out", t.TempDir(), "streams")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &strings.Builder{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read, running := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(read)
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if lines.Text() == "RUNNING" {
				close(running)
			}
		}
	}()
	select {
	case <-running:
	case <-read:
		t.Fatalf("CountApp ended before RUNNING: %v: %s", cmd.Wait(), out)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		_ = stdin.Close()
		<-read
		if err := cmd.Wait(); err != nil {
			t.Errorf("CountApp: %v: %s", err, out)
		}
	}
	t.Cleanup(stop)
	return stop
}
