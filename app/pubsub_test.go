package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// pubsubSetupPy creates, with the Python client, topic P, P-dl, P-lost-dl,
// subscription P (dead letters to P-dl after 5 attempts), P-dlq on P-dl,
// and P-lost whose dead-letter topic nobody subscribes to; then publishes
// argv[2] poison messages and two good ones to P.
const pubsubSetupPy = `
import sys
from google.cloud import pubsub_v1
project, p, n = "` + testenv.PubSubProject + `", sys.argv[1], int(sys.argv[2])
pub, sub = pubsub_v1.PublisherClient(), pubsub_v1.SubscriberClient()
for t in [p, p + "-dl", p + "-lost-dl"]:
    pub.create_topic(request={"name": pub.topic_path(project, t)})
def dl(t, attempts):
    return {"dead_letter_topic": pub.topic_path(project, t), "max_delivery_attempts": attempts}
sub.create_subscription(request={"name": sub.subscription_path(project, p), "topic": pub.topic_path(project, p), "dead_letter_policy": dl(p + "-dl", 5)})
sub.create_subscription(request={"name": sub.subscription_path(project, p + "-dlq"), "topic": pub.topic_path(project, p + "-dl")})
sub.create_subscription(request={"name": sub.subscription_path(project, p + "-lost"), "topic": pub.topic_path(project, p), "dead_letter_policy": dl(p + "-lost-dl", 20)})
fs = [pub.publish(pub.topic_path(project, p), b"poison %d" % i, poison="1") for i in range(n)]
fs += [pub.publish(pub.topic_path(project, p), b"good %d" % i) for i in range(2)]
for f in fs:
    f.result()
`

// pubsubNackPy is a failing consumer of subscription argv[1] (the
// Python client's streaming subscriber): it acks good messages and nacks
// poison ones, which the emulator dead-letters on their 5th nack. It runs
// until killed.
const pubsubNackPy = `
import sys
from google.cloud import pubsub_v1
sub = pubsub_v1.SubscriberClient()
path = sub.subscription_path("` + testenv.PubSubProject + `", sys.argv[1])
def handle(m):
    if m.attributes.get("poison") == "1":
        m.nack()
    else:
        m.ack()
sub.subscribe(path, handle).result()
`

// failingConsumer runs pubsubNackPy on subscription sub until the test
// ends.
func failingConsumer(t *testing.T, emu *testenv.PubSubEmulator, sub string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "python3", "-c", pubsubNackPy, sub)
	cmd.Env = emu.Env()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		// Killed, it exits with a signal; its output tells anything else.
		if err := cmd.Wait(); err != nil && ctx.Err() == nil {
			t.Errorf("failing consumer: %v\n%s", err, out.String())
		}
	})
}

// pubsubProject is a config section for the test emulator watching the
// subscriptions whose names start with prefix.
func pubsubProject(emu *testenv.PubSubEmulator, name, prefix string) config.PubSub {
	return config.PubSub{
		Name: name, Project: emu.Project, Endpoint: emu.Host,
		Subscriptions: config.Filter{Include: []string{prefix + ".*"}},
	}
}

// pubsubWorld sets up pubsubSetupPy's topology under a unique prefix
// with n poison messages.
func pubsubWorld(t *testing.T, emu *testenv.PubSubEmulator, n string) string {
	t.Helper()
	p := strings.ReplaceAll(testenv.Unique("ps"), "_", "-")
	emu.Python(t, pubsubSetupPy, p, n)
	return p
}

// TestCheckPubSub runs check on a project of the emulator and on one whose
// endpoint nothing listens on: the first is ok with its subscriptions,
// DLQ and traps, the second fails, and neither affects the other.
func TestCheckPubSub(t *testing.T) {
	emu := testenv.PubSub(t)
	p := pubsubWorld(t, emu, "2")
	cfg := testConfig(t)
	cfg.PollInterval = 15 * time.Second
	cfg.PollTimeout = 10 * time.Second
	cfg.History = time.Hour
	cfg.PubSub = []config.PubSub{pubsubProject(emu, "local", p), {Name: "gone", Project: emu.Project, Endpoint: "127.0.0.1:1"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Check(context.Background(), cfg, &out, nil)
	if err == nil || !strings.Contains(err.Error(), "pubsub:gone") || strings.Contains(err.Error(), "pubsub:local") {
		t.Errorf("Check = %v, want only pubsub:gone to fail", err)
	}
	// P (maxDeliveryAttempts 5: at its floor) and P-lost (a dead-letter
	// topic nobody subscribes to): two traps.
	for _, want := range []string{
		"ok   pubsub:local: 3 subscriptions, 1 DLQ, 2 configuration traps; backlog unknown (monitoring.enabled is off), DLQ depths counted",
		"FAIL pubsub:gone: pubsub gone: list topics: ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestPubSubDLQReplay serves a Pub/Sub project: its DLQ is listed by
// /api/v1/dlqs with the depth a count saw and in /metrics, with the
// subscriptions' status and traps; browsing it shows the dead letters with
// their source, and a replay through the API republishes them to the
// source's topic, where the consumer, still failing, dead-letters them
// again: the DLQ fills back to 3, each copy stamped with the replay.
func TestPubSubDLQReplay(t *testing.T) {
	emu := testenv.PubSub(t)
	p := pubsubWorld(t, emu, "3")
	cfg := testConfig(t)
	cfg.PollInterval, cfg.PollTimeout = 2*time.Second, 2*time.Second
	cfg.PubSub = []config.PubSub{pubsubProject(emu, "local", p)}
	cfg.PubSub[0].PollInterval = time.Second // read at every poll
	failingConsumer(t, emu, p)
	r := start(t, cfg)
	id := "pubsub:local::" + p + "-dlq"
	esc := url.PathEscape(id)
	eventually(t, "the Pub/Sub DLQ listed with 3", func() bool { n, ok := r.listedDLQ(t, id); return ok && n == 3 })
	_, metrics := r.get(t, "/metrics")
	for _, want := range []string{
		`queuewatch_dlq_messages{broker="pubsub",cluster="local",dlq="` + p + `-dlq",source="` + p + `",vhost=""} 3`,
		`queuewatch_pubsub_subscription_lint{cluster="local",lint="dead_letters_dropped",subscription="` + p + `-lost"} 1`,
		`queuewatch_pubsub_subscription_status{cluster="local",status="warn",subscription="` + p + `-lost"} 1`,
		`queuewatch_pubsub_subscription_info{cluster="local",delivery="pull",dlq="true",subscription="` + p + `-dlq",topic="` + p + `-dl"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, path := range []string{"/", "/api/v1/dlqs", "/api/v1/sources", "/dlq/" + esc} {
		if code, body := r.get(t, path); code != http.StatusOK {
			t.Errorf("GET %s with a Pub/Sub project: %d; body %.300q", path, code, body)
		}
	}
	code, body := r.get(t, "/api/v1/dlqs/"+esc+"/messages")
	if code != http.StatusOK || strings.Count(body, "poison ") != 3 || !strings.Contains(body, p) {
		t.Fatalf("browse: %d, want the 3 poison messages and their source %s; body %.500q", code, p, body)
	}

	var accepted struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	code, body = r.send(t, "/api/v1/dlqs/"+esc+"/replay", `{"selection":{"all":true}}`)
	if err := json.Unmarshal([]byte(body), &accepted); code != http.StatusAccepted || err != nil {
		t.Fatalf("POST replay: %d %s, want 202 and a job", code, body)
	}
	var job string
	eventually(t, "the replay succeeded with 3 moved", func() bool {
		_, job = r.get(t, "/api/v1/replays/"+accepted.Job.ID)
		return strings.Contains(job, `"state":"succeeded"`) && strings.Contains(job, `"moved":3`)
	})
	// The consumer fails them again: each copy comes back as a new dead
	// letter that carries the job's stamp.
	eventually(t, "the copies dead-lettered again", func() bool {
		_, body := r.get(t, "/api/v1/dlqs/"+esc+"/messages")
		return strings.Count(body, accepted.Job.ID) >= 3
	})
}

// TestPubSubSummaryCost: with Cloud Monitoring on, check's line says what
// its calls cost a month at the project's interval: 5 calls a read every
// minute are 216,000 calls, $2.16.
func TestPubSubSummaryCost(t *testing.T) {
	snap := &queue.Snapshot{
		PubSubSubscriptions: []queue.PubSubSubscription{{Name: "a", Lints: []queue.PubSubLint{{Kind: "resource_error"}}}, {Name: "b"}},
		DLQs:                []queue.DLQ{{Name: "b"}},
		PubSub:              &queue.PubSubProject{Monitoring: true, ReadEvery: time.Minute},
	}
	want := "2 subscriptions, 1 DLQ, 1 configuration trap; Cloud Monitoring: 5 calls a read every 1m0s: about 216,000 calls, $2.16 a month at $0.01 per 1,000 (first million a month free)"
	if got := pubsubSummary(snap); got != want {
		t.Errorf("summary\n%q, want\n%q", got, want)
	}
}
