package web

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// natsFake is the fake DLQ service serving one NATS DLQ of consumer
// "worker", whose subject "orders" is also read by "audit".
type natsFake struct{ *fakeDLQ }

func (natsFake) SubjectConsumers(_ context.Context, _, stream, subject string) ([]string, error) {
	if stream == "ORDERS" && subject == "orders" {
		return []string{"audit", "worker"}, nil
	}
	return nil, nil
}

func TestNATSDLQPage(t *testing.T) {
	f := newFakeDLQ()
	died := time.Now().Add(-time.Minute)
	f.msgs = []queue.Message{{
		ID: "ORDERS@7", Timestamp: died, Body: []byte(`{"n":7}`),
		Headers: []queue.Header{
			{Key: "Qw-Dead-Stream", Value: []byte("ORDERS")},
			{Key: "Qw-Dead-Sequence", Value: []byte("7")},
			{Key: "Qw-Dead-Subject", Value: []byte("orders")},
			{Key: "Qw-Dead-Term-Reason", Value: []byte("bad <b>payload</b>")},
			{Key: "Qw-Dead-Payload-Lost", Value: []byte("true")},
		},
		Death: queue.DeathInfo{Framework: "nats", OriginalTopic: "orders", Deaths: []queue.Death{{Queue: "ORDERS", Reason: "terminated", Count: 1, Time: died, RoutingKeys: []string{"orders"}}}},
	}}
	s := dlqServer(t, "none", natsFake{f})
	id := queue.DLQRef{Broker: queue.NATS, Cluster: "main", Name: "worker"}.ID()
	rec := do(t, s, "GET", "/dlq/"+url.PathEscape(id))
	body := rec.Body.String()
	for _, want := range []string{
		"JetStream dead letter", "<th>term reason</th>", "bad &lt;b&gt;payload&lt;/b&gt;", "<th>sequence</th>",
		"Payload lost", `id="c-fanout"`, "redelivers to every consumer of it in ORDERS", "also <strong>audit</strong>",
		`id="c-tomove"`, "Move to subject", "subject orders<",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "default exchange") {
		t.Error("a NATS death is described in RabbitMQ's terms")
	}
	if strings.Contains(body, "also <strong>audit and worker") {
		t.Error("the warning names the dead-lettering consumer as another reader")
	}
}
