package pubsub

import (
	"reflect"
	"testing"
	"time"
)

const day = 24 * time.Hour

// TestLints finds each trap once, on the subscription it concerns, and
// nothing on a well-configured pair.
func TestLints(t *testing.T) {
	topo := &Topology{
		Topics: []Topic{{ID: "orders"}, {ID: "orders-dl"}, {ID: "pay"}, {ID: "pay-dl"}, {ID: "ship"}, {ID: "ship-dl"}, {ID: "bq"}},
		Subscriptions: []Subscription{
			// orders → orders-dl → orders-dlq, kept 1d against 7d, at 5 attempts.
			{ID: "orders", Topic: "orders", Delivery: Pull, Retention: 7 * day, DeadLetterTopic: "orders-dl", MaxDeliveryAttempts: 5},
			{ID: "orders-dlq", Topic: "orders-dl", Delivery: Pull, Retention: day},
			// pay → pay-dl, which nobody subscribes to.
			{ID: "pay", Topic: "pay", Delivery: Push, Retention: day, DeadLetterTopic: "pay-dl", MaxDeliveryAttempts: 10},
			// ship → ship-dl → ship-dlq, well configured.
			{ID: "ship", Topic: "ship", Delivery: Pull, Retention: day, DeadLetterTopic: "ship-dl", MaxDeliveryAttempts: 20},
			{ID: "ship-dlq", Topic: "ship-dl", Delivery: Pull, Retention: 7 * day},
			// A BigQuery export that cannot write.
			{ID: "to-bq", Topic: "bq", Delivery: BigQuery, State: StateResourceError},
			// A policy naming a topic that is gone.
			{ID: "lost", Topic: "orders", Delivery: Pull, DeadLetterTopic: "gone-dl", MaxDeliveryAttempts: 50},
		},
	}
	var got []string
	for _, l := range topo.Lints() {
		got = append(got, l.Subscription+" "+string(l.Kind)+": "+l.Sentence)
	}
	want := []string{
		"lost dead_letters_dropped: dead-letter topic gone-dl does not exist: dead letters are dropped",
		"orders dlq_retention_shorter: dead-letter subscription orders-dlq keeps messages 1d, less than this subscription's 7d: dead letters may expire unseen",
		"orders max_delivery_attempts_floor: maxDeliveryAttempts is 5, its floor: a consumer down for a few redeliveries dead-letters healthy messages",
		"pay dead_letters_dropped: dead-letter topic pay-dl has no subscription: dead letters are dropped",
		"to-bq resource_error: in RESOURCE_ERROR: Pub/Sub cannot deliver to its bigquery destination, and its backlog grows until that is fixed",
	}
	// Lints come in subscription order; sort the want the same way.
	if !reflect.DeepEqual(got, sortedBySubscription(want)) {
		t.Errorf("lints:\n%q\nwant\n%q", got, sortedBySubscription(want))
	}

	dls := topo.DeadLetters()
	wantDL := []DeadLetter{
		{Source: "orders", Topic: "orders-dl", DLQs: []string{"orders-dlq"}},
		{Source: "pay", Topic: "pay-dl"},
		{Source: "ship", Topic: "ship-dl", DLQs: []string{"ship-dlq"}},
		{Source: "lost", Topic: "gone-dl"},
	}
	if !reflect.DeepEqual(dls, wantDL) {
		t.Errorf("dead letters = %+v, want %+v", dls, wantDL)
	}
}

// sortedBySubscription orders lint lines as Lints does: the topology's
// subscriptions are sorted by id when read, and the test's are listed in
// that order but for "lost".
func sortedBySubscription(lines []string) []string {
	order := []string{"orders", "pay", "to-bq", "lost"}
	var out []string
	for _, sub := range order {
		for _, l := range lines {
			if len(l) > len(sub) && l[:len(sub)+1] == sub+" " {
				out = append(out, l)
			}
		}
	}
	return out
}
