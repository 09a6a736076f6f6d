package testenv

import (
	"strings"
	"testing"
)

// TestPubSubEmulatorServes starts the shared emulator and has the Python
// google-cloud-pubsub library, a client no one here wrote, create a topic
// and a subscription, publish and pull one message on it.
func TestPubSubEmulatorServes(t *testing.T) {
	s := PubSub(t)
	name := Unique("testenv")
	out := s.Python(t, `
import sys
from google.cloud import pubsub_v1
project, name = sys.argv[1], sys.argv[2]
pub, sub = pubsub_v1.PublisherClient(), pubsub_v1.SubscriberClient()
topic, subscription = pub.topic_path(project, name), sub.subscription_path(project, name)
pub.create_topic(name=topic)
sub.create_subscription(name=subscription, topic=topic)
pub.publish(topic, b"hello").result()
resp = sub.pull(subscription=subscription, max_messages=1, timeout=30)
print(resp.received_messages[0].message.data.decode())
`, s.Project, name)
	if got := strings.TrimSpace(string(out)); got != "hello" {
		t.Fatalf("pulled %q, want the published hello", got)
	}
	t.Logf("the Pub/Sub emulator started in %s", s.StartupTime)
}
