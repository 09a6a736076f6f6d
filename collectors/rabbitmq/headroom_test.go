package rabbitmq

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestRetentionHeadroomTTLPolicy: a queue's message TTL comes from its
// argument or its policy, the lower of the two as the broker applies it;
// its headroom is that TTL less the head's age (the timestamp property),
// and the broker removes the head when the headroom said, seen within a
// poll. A queue that dead-letters loses nothing to its TTL: no headroom.
func TestRetentionHeadroomTTLPolicy(t *testing.T) {
	a := requireRabbit(t)
	vh := a.VHost("headroom")
	ch := channel(t, vh)
	a.queue(vh, "orders", map[string]any{"x-message-ttl": 60000})
	a.queue(vh, "kept", map[string]any{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "kept.dlq"})
	a.queue(vh, "kept.dlq", nil)
	a.policy(vh, "ttl", "^(orders|kept)$", map[string]any{"message-ttl": 12000})
	a.waitPolicy(vh, "orders", "ttl")
	a.waitPolicy(vh, "kept", "ttl")
	published := time.Now().Truncate(time.Second) // the timestamp property has seconds
	for _, q := range []string{"orders", "kept"} {
		for range 3 {
			publish(t, ch, "", q, amqp.Publishing{Body: []byte("m"), Timestamp: published})
		}
	}

	// The broker's own setting: the effective policy of the queue.
	var info struct {
		Policy map[string]any `json:"effective_policy_definition"`
	}
	if err := json.Unmarshal(a.Do(http.MethodGet, rabbit.APIPath("queues", vh, "orders"), nil), &info); err != nil {
		t.Fatal(err)
	}
	ttl := time.Duration(info.Policy["message-ttl"].(float64)) * time.Millisecond

	// Management statistics show the head's timestamp within about five
	// seconds: poll as queuewatch does until they do.
	s := newSource(t, config.RabbitMQ{ManagementURL: testenv.ManagementURL}, Options{VHosts: []string{vh}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		snap := poll(t, s)
		q, _ := findQueue(snap, vh, "orders")
		if q.HasHeadAge && q.Ready == 3 {
			if q.MessageTTL != ttl || ttl != 12*time.Second {
				t.Fatalf("message TTL %s; want the policy's %s, lower than the argument's 1m", q.MessageTTL, ttl)
			}
			h := q.RetentionHeadroom()
			want := published.Add(ttl).Sub(snap.Time).Seconds()
			if !h.Known || h.Projected || h.Seconds < want-1 || h.Seconds > want+1 || h.Limit != "message TTL 12s" {
				t.Fatalf("headroom %+v; want ≈%.1fs from the message TTL %s", h, want, ttl)
			}
			if kept, _ := findQueue(snap, vh, "kept"); kept.RetentionHeadroom().Known {
				t.Errorf("a queue that dead-letters: headroom %+v; want none", kept.RetentionHeadroom())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue orders never showed 3 ready with a head timestamp: %+v", q)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The broker removes the head at the predicted time: count exactly
	// (passive declare) every 100ms until the queue is empty.
	predicted := published.Add(ttl)
	for {
		got, err := ch.QueueDeclarePassive("orders", false, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Messages == 0 {
			break
		}
		if time.Since(predicted) > 5*time.Second {
			t.Fatalf("%d messages outlived their predicted expiry at %s by 5s", got.Messages, predicted.Format(time.StampMilli))
		}
		time.Sleep(100 * time.Millisecond)
	}
	late := time.Since(predicted)
	t.Logf("message TTL %s: the head went %s after the predicted time", ttl, late)
	// The timestamp property has whole seconds, so the prediction is up to
	// a second early; a poll of 100ms on top.
	if late < -100*time.Millisecond || late > 1200*time.Millisecond {
		t.Errorf("the head went %s after the predicted %s; want within a second and a poll", late, predicted.Format(time.StampMilli))
	}
}
