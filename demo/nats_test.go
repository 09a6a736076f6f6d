package demo

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestNATSDemo: each demo consumer shows the state it is there to show.
func TestNATSDemo(t *testing.T) {
	d, err := StartNATS(t.Context(), NATSOptions{Speed: testSpeed})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	nc, err := nats.Connect(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// Dead letters are advisories: count both kinds for the notifier.
	maxDeliveries, err := nc.SubscribeSync("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + NATSStream + "." + NATSNotifier)
	if err != nil {
		t.Fatal(err)
	}
	terminated, err := nc.SubscribeSync("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED." + NATSStream + "." + NATSNotifier)
	if err != nil {
		t.Fatal(err)
	}
	info := func(name string) *jetstream.ConsumerInfo {
		// A raw CONSUMER.INFO: nats.go's handles are typed pull or push.
		msg, err := nc.Request("$JS.API.CONSUMER.INFO."+NATSStream+"."+name, nil, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var ci jetstream.ConsumerInfo
		if err := json.Unmarshal(msg.Data, &ci); err != nil {
			t.Fatal(err)
		}
		return &ci
	}
	eventually(t, "invoicing-stalled reaches max_ack_pending", func() error {
		if ci := info(NATSInvoicing); ci.NumAckPending != natsInvoicingMaxAckPending || ci.NumPending == 0 {
			return fmt.Errorf("ack pending %d, pending %d", ci.NumAckPending, ci.NumPending)
		}
		return nil
	})
	eventually(t, "the notifier dead-letters by max_deliver and by AckTerm", func() error {
		a, _, _ := maxDeliveries.Pending()
		b, _, _ := terminated.Pending()
		if a == 0 || b == 0 {
			return fmt.Errorf("%d max deliveries and %d terminated advisories", a, b)
		}
		return nil
	})
	first := info(NATSAnalytics).NumPending
	eventually(t, "analytics-slow falls behind", func() error {
		if p := info(NATSAnalytics).NumPending; p <= first+5 {
			return fmt.Errorf("pending %d, was %d", p, first)
		}
		return nil
	})
	if ci := info(NATSFulfillment); ci.NumPending > 20 {
		t.Errorf("fulfillment pending %d: it should keep up", ci.NumPending)
	}
	if ci := info(NATSMailer); ci.PushBound || ci.NumPending == 0 {
		t.Errorf("mailer-push: bound %v pending %d, want unbound with pending messages", ci.PushBound, ci.NumPending)
	}
}
