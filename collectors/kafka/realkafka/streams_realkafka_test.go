package realkafka

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// streamsApp is a running CountApp (internal/testenv/testdata/frameworks/
// kafka-streams): a Kafka Streams 4.4 application that counts the values
// of its input topic through a repartition topic, and stays until leave.
type streamsApp struct {
	t     *testing.T
	stdin io.Closer
	wait  func() error
	read  <-chan struct{} // closed once stdout was read to its end
	out   *strings.Builder
}

// runStreamsApp starts CountApp as application id app on input, with the
// given group.protocol (streams or classic), and waits until it printed
// RUNNING: its threads run and its group has formed.
func (b *broker) runStreamsApp(app, input, protocol string) *streamsApp {
	b.t.Helper()
	fw := testenv.RealFramework(b.t, "kafka-streams")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	b.t.Cleanup(cancel)
	output := b.topic(1)
	cmd := fw.Command(ctx, "io.queuewatch.frameworks.CountApp", b.node.Addr(), app, input, output, b.t.TempDir(), protocol)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.t.Fatal(err)
	}
	out := &strings.Builder{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	read, running := make(chan struct{}), make(chan struct{})
	a := &streamsApp{t: b.t, stdin: stdin, wait: cmd.Wait, read: read, out: out}
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
		b.t.Cleanup(func() { _ = stdin.Close(); <-read; _ = cmd.Wait() })
		return a
	case <-read:
		err := cmd.Wait()
		b.t.Fatalf("CountApp %s ended before RUNNING: %v: %s", app, err, out)
		return nil
	}
}

// leave closes the application's standard input: it closes, leaving the
// group, and exits.
func (a *streamsApp) leave() {
	a.t.Helper()
	if err := a.stdin.Close(); err != nil {
		a.t.Fatal(err)
	}
	<-a.read
	if err := a.wait(); err != nil {
		a.t.Fatalf("CountApp: %v: %s", err, a.out)
	}
}

// streamsTool runs kafka-streams-groups (StreamsGroupCommand) and parses
// its table as shareTool does.
func (b *broker) streamsTool(args ...string) []map[string]string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := b.node.Java(ctx, "org.apache.kafka.tools.streams.StreamsGroupCommand",
		append([]string{"--bootstrap-server", b.node.Addr()}, args...)...)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("kafka-streams-groups %s:\n%s", strings.Join(args, " "), out)
	return parseTable(out)
}

// TestStreamsAppForms checks the test program itself: CountApp with
// group.protocol=streams on Kafka 4.4 forms a group of type streams,
// which kafka-streams-groups describes as Stable with one member.
func TestStreamsAppForms(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	input := b.topic(3)
	app := testenv.Unique("streams")
	b.runStreamsApp(app, input, "streams")
	listed, err := b.adm.ListGroups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g := listed[app]; g.GroupType != "streams" {
		t.Errorf("listed %+v; want type streams", g)
	}
	state := b.streamsTool("--describe", "--state", "--group", app)
	if len(state) != 1 || state[0]["STATE"] != "Stable" || state[0]["#MEMBERS"] != "1" {
		t.Errorf("kafka-streams-groups --state: %v; want Stable, 1 member", state)
	}
}
