package realkafka

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
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
// RUNNING: its threads run and its group has formed. Instances of one
// application write one output topic, created by the first.
func (b *broker) runStreamsApp(app, input, protocol string) *streamsApp {
	b.t.Helper()
	fw := testenv.RealFramework(b.t, "kafka-streams")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	b.t.Cleanup(cancel)
	output := app + "-counts"
	if _, err := b.adm.CreateTopic(context.Background(), 1, 1, nil, output); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		b.t.Fatal(err)
	}
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

// TestStreamsGroup runs a Kafka Streams 4.4 application with
// group.protocol=streams over 30 records: queuewatch must list its group
// as a streams group (not a consumer group in error, not a partial poll)
// with what kafka-streams-groups --describe says of it — state, members
// with their processes and tasks, and the lag per partition of its source
// and repartition topics — while it runs, and after it left with records
// waiting.
func TestStreamsGroup(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	input := b.topic(3)
	b.produce(input, 3, 10)
	app := testenv.Unique("streams")
	run := b.runStreamsApp(app, input, "streams")

	s := judge(b.source(false, app))
	repartition := app + "-by-value-repartition"
	caughtUp := func(g *queue.StreamsGroup) bool {
		return len(g.Members) == 1 && len(g.Partitions) == 6 && g.TotalLag() == 0 && g.Partitions[0].Committed >= 0
	}
	snap, g := b.waitStreams(s, app, caughtUp)
	if !caughtUp(g) {
		t.Fatalf("streams group never caught up: %+v", g)
	}
	if len(snap.Partial) != 0 || len(snap.Groups) != 0 {
		t.Errorf("partial %v, consumer groups %+v; want none", snap.Partial, snap.Groups)
	}
	if g.State != "Stable" || g.Epoch < 1 || g.Epoch != g.AssignmentEpoch {
		t.Errorf("state %s, epochs %d/%d; want Stable, assignment caught up", g.State, g.Epoch, g.AssignmentEpoch)
	}
	if active, standby, warmup := g.Tasks(); active != 6 || standby != 0 || warmup != 0 || g.Processes() != 1 {
		t.Errorf("tasks %d/%d/%d in %d processes; want 6 active in 1", active, standby, warmup, g.Processes())
	}
	if len(g.Subtopologies) != 2 || fmt.Sprint(g.Subtopologies[0].SourceTopics, g.Subtopologies[1].RepartitionSource) != fmt.Sprint([]string{input}, []string{repartition}) {
		t.Errorf("subtopologies %+v; want %s, then %s", g.Subtopologies, input, repartition)
	}
	for _, p := range g.Partitions {
		if p.Internal != (p.Topic == repartition) {
			t.Errorf("partition %+v: internal only for %s", p, repartition)
		}
	}
	if g.Status != queue.StatusOK || !strings.Contains(g.StatusReason, "6 active tasks on 1 member") {
		t.Errorf("status %s %q; want ok, its tasks and member", g.Status, g.StatusReason)
	}
	b.compareStreamsTool(g)

	run.leave()
	b.produce(input, 3, 5)
	_, g = b.waitStreams(s, app, func(g *queue.StreamsGroup) bool { return len(g.Members) == 0 && g.TotalLag() == 15 })
	if len(g.Members) != 0 || g.State != "Empty" || g.TotalLag() != 15 {
		t.Fatalf("after the application left: state %s, members %+v, lag %d; want Empty, none, 15", g.State, g.Members, g.TotalLag())
	}
	if g.Status != queue.StatusStop || !strings.HasPrefix(g.StatusReason, "no members") {
		t.Errorf("after the application left: status %s %q; want stop", g.Status, g.StatusReason)
	}
	// kafka-streams-groups --describe lists no offsets of a group without
	// members ("has no active members"): the lag is the 5 records
	// produced to each input partition since.
	for _, p := range g.Partitions {
		if want := map[bool]int64{false: 5, true: 0}[p.Internal]; p.Lag != want {
			t.Errorf("after the application left: %+v; want lag %d", p, want)
		}
	}
	if state := b.streamsTool("--describe", "--state", "--group", app); len(state) != 1 || state[0]["STATE"] != "Empty" || state[0]["#MEMBERS"] != "0" {
		t.Errorf("kafka-streams-groups --state %v; want Empty, 0 members", state)
	}
}

// TestStreamsClassicProtocol runs the same application on the classic
// protocol: its group stays a consumer group, read as before.
func TestStreamsClassicProtocol(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	input := b.topic(1)
	b.produce(input, 1, 10)
	app := testenv.Unique("streams")
	b.runStreamsApp(app, input, "classic")
	s := judge(b.source(false, app))
	snap := s.poll(t)
	for deadline := time.Now().Add(30 * time.Second); (len(snap.Groups) == 0 || snap.Groups[0].TotalLag() != 0) && time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		snap = s.poll(t)
	}
	if len(snap.Groups) != 1 || len(snap.StreamsGroups) != 0 || len(snap.Partial) != 0 {
		t.Fatalf("groups %+v, streams groups %+v, partial %v; want one consumer group", snap.Groups, snap.StreamsGroups, snap.Partial)
	}
	if g := snap.Groups[0]; g.Type != queue.GroupClassic || g.State != "Stable" || g.Members != 1 || g.TotalLag() != 0 {
		t.Errorf("group %+v; want classic, Stable, 1 member, caught up", g)
	}
}

// waitStreams polls s until ok holds for the streams group (the
// application commits every 200 ms) or 60 s passed, and returns the last
// read.
func (b *broker) waitStreams(s *judgedSource, name string, ok func(*queue.StreamsGroup) bool) (*queue.Snapshot, *queue.StreamsGroup) {
	b.t.Helper()
	snap := s.poll(b.t)
	g := streamsGroup(b.t, snap, name)
	for deadline := time.Now().Add(60 * time.Second); !ok(g) && time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		snap = s.poll(b.t)
		g = streamsGroup(b.t, snap, name)
	}
	return snap, g
}

func streamsGroup(t *testing.T, snap *queue.Snapshot, name string) *queue.StreamsGroup {
	t.Helper()
	g, ok := snap.StreamsGroup(name)
	if !ok {
		t.Fatalf("streams group %s missing: %+v (consumer groups %+v)", name, snap.StreamsGroups, snap.Groups)
	}
	if g.Err != "" {
		t.Fatalf("streams group %s: %s", name, g.Err)
	}
	return g
}

// compareStreamsTool compares g with kafka-streams-groups --describe:
// the lag per partition (--offsets), each member's process, client id and
// active tasks (--members), the state and member count (--state).
func (b *broker) compareStreamsTool(g *queue.StreamsGroup) {
	b.t.Helper()
	want := map[string]string{}
	for _, row := range b.streamsTool("--describe", "--offsets", "--group", g.Name) {
		want[row["TOPIC"]+"/"+row["PARTITION"]] = row["OFFSET-LAG"]
	}
	got := map[string]string{}
	for _, p := range g.Partitions {
		got[p.Topic+"/"+strconv.Itoa(int(p.Partition))] = strconv.FormatInt(p.Lag, 10)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		b.t.Errorf("lag %v; kafka-streams-groups says %v", got, want)
	}
	wantMembers := map[string]string{}
	for _, row := range b.streamsTool("--describe", "--members", "--group", g.Name) {
		wantMembers[row["MEMBER"]] = row["PROCESS"] + " " + row["CLIENT-ID"] + " " + row["ASSIGNMENTS"]
	}
	gotMembers := map[string]string{}
	for _, m := range g.Members {
		tasks := "ACTIVE:"
		for _, a := range m.Active {
			tasks += fmt.Sprintf(" %s:%s;", a.Subtopology, strings.ReplaceAll(fmt.Sprint(a.Partitions), " ", ","))
		}
		gotMembers[m.ID] = m.ProcessID + " " + m.ClientID + " " + tasks
	}
	if fmt.Sprint(gotMembers) != fmt.Sprint(wantMembers) {
		b.t.Errorf("members %v; kafka-streams-groups says %v", gotMembers, wantMembers)
	}
	state := b.streamsTool("--describe", "--state", "--group", g.Name)
	if len(state) != 1 || state[0]["STATE"] != g.State || state[0]["#MEMBERS"] != strconv.Itoa(len(g.Members)) {
		b.t.Errorf("state %s, %d members; kafka-streams-groups says %v", g.State, len(g.Members), state)
	}
}

// TestStreamsGroupStalled has the application's stream thread block on a
// poison record (CountApp holds it until it closes): the member stays, the
// committed offsets stop, and as records keep arriving the group is
// stalled, its lag still what kafka-streams-groups says.
func TestStreamsGroupStalled(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	input := b.topic(1)
	b.produce(input, 1, 10)
	app := testenv.Unique("streams")
	b.runStreamsApp(app, input, "streams")
	s := judge(b.source(false, app))
	_, g := b.waitStreams(s, app, func(g *queue.StreamsGroup) bool {
		return len(g.Partitions) == 2 && g.TotalLag() == 0 && g.Partitions[0].Committed >= 0
	})
	if g.TotalLag() != 0 || g.Status != queue.StatusOK {
		t.Fatalf("before the poison record: lag %d, %s %q; want 0, ok", g.TotalLag(), g.Status, g.StatusReason)
	}

	b.produceValues(input, "poison", "a", "b")
	// The poison record and those after it are never committed.
	b.waitStreams(s, app, func(g *queue.StreamsGroup) bool { return g.TotalLag() >= 3 })
	b.produceValues(input, "c", "d")
	_, g = b.waitStreams(s, app, func(g *queue.StreamsGroup) bool { return g.Status == queue.StatusStall })
	if g.Status != queue.StatusStall || len(g.Members) != 1 || !strings.Contains(g.StatusReason, "2 active tasks on 1 member") {
		t.Fatalf("blocked on a poison record: %s %q, members %d; want stall with its tasks and member", g.Status, g.StatusReason, len(g.Members))
	}
	b.compareStreamsTool(g)
}

// TestStreamsGroupMemberLeaves runs two instances of one application: the
// group has two members in two processes sharing the tasks, as
// kafka-streams-groups says; when one leaves, the other takes every task
// and the group stays ok.
func TestStreamsGroupMemberLeaves(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	input := b.topic(2)
	b.produce(input, 2, 10)
	app := testenv.Unique("streams")
	first := b.runStreamsApp(app, input, "streams")
	b.runStreamsApp(app, input, "streams")
	s := judge(b.source(false, app))
	shared := func(g *queue.StreamsGroup) bool {
		active, _, _ := g.Tasks()
		return len(g.Members) == 2 && g.State == "Stable" && active == 4 && g.TotalLag() == 0 &&
			len(g.Members[0].Active) > 0 && len(g.Members[1].Active) > 0
	}
	_, g := b.waitStreams(s, app, shared)
	if !shared(g) || g.Processes() != 2 {
		t.Fatalf("two instances: %+v; want 2 members in 2 processes sharing 4 active tasks, caught up", g)
	}
	b.compareStreamsTool(g)

	first.leave()
	alone := func(g *queue.StreamsGroup) bool {
		active, _, _ := g.Tasks()
		return len(g.Members) == 1 && g.State == "Stable" && active == 4
	}
	_, g = b.waitStreams(s, app, alone)
	if !alone(g) || g.Status != queue.StatusOK || !strings.Contains(g.StatusReason, "4 active tasks on 1 member") {
		t.Fatalf("after one instance left: %+v, %s %q; want 1 member with the 4 tasks, ok", g, g.Status, g.StatusReason)
	}
	b.compareStreamsTool(g)
}
