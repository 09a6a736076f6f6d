package web

import (
	"encoding/json"
	"html"
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// TestNATSConsumerRates: a JetStream consumer's page and API object carry
// its consume and produce rates and the ETA from them; a filtered
// consumer's are not known, and both say so rather than show a number.
func TestNATSConsumerRates(t *testing.T) {
	s := natsServer()
	snap := s.opts.Monitor.(staticMonitor).snaps[1]
	snap.Consumers = append(snap.Consumers, queue.StreamConsumer{
		Cluster: "local", Stream: "ORDERS", Name: "us-only", Pull: true, FilterSubject: []string{"orders.us"}, DeliveredSeq: 10, AckFloorSeq: 10,
	})
	page := do(t, s, "GET", "/nats/local/streams/ORDERS/consumers/healthy").Body.String()
	for _, want := range []string{`data-fact="eta">caught up</dd>`, `>12.5/s <span class="muted">/</span> 12/s</dd>`, html.EscapeString(components.RateSourceNATS)} {
		if !strings.Contains(page, want) {
			t.Errorf("healthy consumer page lacks %q", want)
		}
	}
	filtered := do(t, s, "GET", "/nats/local/streams/ORDERS/consumers/us-only").Body.String()
	if !strings.Contains(filtered, `data-fact="rates" title="a filtered consumer: the stream&#39;s sequences count other subjects too, so its own rates are not known">not known`) {
		t.Errorf("a filtered consumer's page does not say its rates are not known")
	}
	var list struct{ Consumers []map[string]any }
	if err := json.Unmarshal(do(t, s, "GET", "/api/v1/nats/consumers").Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[string]any{}
	for _, c := range list.Consumers {
		byName[c["consumer"].(string)] = c
	}
	if h := byName["healthy"]; h["consume_rate"] != 12.5 || h["produce_rate"] != 12.0 || h["eta_seconds"] != 0.0 {
		t.Errorf("healthy consumer in the API: %v", h)
	}
	if f := byName["us-only"]; f["consume_rate"] != nil || !strings.HasPrefix(f["rates_unknown"].(string), "a filtered consumer") {
		t.Errorf("filtered consumer in the API: %v", f)
	}
}

// TestSQSRatesUnknown: an SQS queue's page and API object say that its
// rates, and so an ETA, are not known, rather than derive one from the
// visible count; a DLQ's page says nothing of rates.
func TestSQSRatesUnknown(t *testing.T) {
	s := sqsServer()
	page := do(t, s, "GET", "/sqs/prod-eu/queues/orders").Body.String()
	if !strings.Contains(page, `data-fact="rates"`) || !strings.Contains(page, `data-note="rates">Consume and produce rates, and so a catch-up ETA, are `+html.EscapeString(components.SQSRatesUnknown)+`.</p>`) {
		t.Error("the SQS queue page does not say its rates are not known")
	}
	if dlq := do(t, s, "GET", "/sqs/prod-eu/queues/orders-dlq").Body.String(); strings.Contains(dlq, `data-note="rates"`) {
		t.Error("a DLQ's page speaks of consume rates")
	}
	var list struct{ Queues []map[string]any }
	if err := json.Unmarshal(do(t, s, "GET", "/api/v1/sqs/queues").Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	for _, q := range list.Queues {
		if q["consume_rate"] != nil || q["rates_unknown"] != components.SQSRatesUnknown {
			t.Errorf("%v: rates %v, rates_unknown %v", q["queue"], q["consume_rate"], q["rates_unknown"])
		}
	}
}
