package components

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

func TestOldestAge(t *testing.T) {
	for _, tt := range []struct {
		basis      queue.AgeBasis
		want       string
		titleHas   string
		titleLacks string
	}{
		{queue.AgeExact, "3m 20s", "200 s", "estimated"},
		{queue.AgeBrowsed, "≈ 3m 20s", "as the last browse saw it", ""},
		{queue.AgeBacklog, "≈ 3m 20s", "since polls first saw the current backlog", ""},
	} {
		d := &queue.DLQ{OldestAge: 200 * time.Second, HasOldestAge: true, OldestAgeBasis: tt.basis}
		if got := OldestAge(d); got != tt.want {
			t.Errorf("%q: OldestAge = %q, want %q", tt.basis, got, tt.want)
		}
		title := OldestAgeTitle(d)
		if !strings.Contains(title, tt.titleHas) || tt.titleLacks != "" && strings.Contains(title, tt.titleLacks) {
			t.Errorf("%q: title %q, want it to say %q", tt.basis, title, tt.titleHas)
		}
	}
}

// TestDLQPageMarksEstimatedAge renders the DLQ page head with an
// estimated age: the ≈ and the explanation reach the HTML.
func TestDLQPageMarksEstimatedAge(t *testing.T) {
	d := DLQData{
		ID: "rabbitmq:main:/:q.dlq", Broker: "rabbitmq", Cluster: "main", VHost: "/", Name: "q.dlq",
		DLQ: &queue.DLQ{
			Broker: queue.RabbitMQ, Cluster: "main", VHost: "/", Name: "q.dlq", Messages: 3,
			OldestAge: 200 * time.Second, HasOldestAge: true, OldestAgeBasis: queue.AgeBacklog,
		},
	}
	var b strings.Builder
	if err := dlqHead(d, false).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if html := b.String(); !strings.Contains(html, "≈ 3m 20s") || !strings.Contains(html, "estimated: since polls first saw") {
		t.Errorf("DLQ head does not mark the estimate:\n%s", html)
	}
}

// TestEmptyDLQHasNoOldest: an empty DLQ whose last reading carried an age
// shows "—" for its oldest message, not "0s".
func TestEmptyDLQHasNoOldest(t *testing.T) {
	d := DLQData{
		ID: "kafka:main::t.DLT", Broker: "kafka", Cluster: "main", Name: "t.DLT",
		DLQ: &queue.DLQ{Broker: queue.Kafka, Cluster: "main", Name: "t.DLT", HasOldestAge: true, OldestAgeBasis: queue.AgeExact},
	}
	var b strings.Builder
	if err := dlqHead(d, false).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if html := b.String(); !strings.Contains(html, `<dt>oldest</dt><dd class="num"><span class="muted">—</span>`) || strings.Contains(html, ">0s<") {
		t.Errorf("empty DLQ's head dates a message:\n%s", html)
	}
	if deadLetterAge(d.DLQ) != "" {
		t.Errorf("empty DLQ's age in a consumer sentence: %q", deadLetterAge(d.DLQ))
	}
}

// TestHeadersTabDecodesSpringNumbers: Spring's binary partition and
// offset headers read as numbers in the Headers tab, as in the Deaths tab,
// with their bytes beside; other binary headers stay hex.
func TestHeadersTabDecodesSpringNumbers(t *testing.T) {
	m := &queue.Message{ID: "m", Headers: []queue.Header{
		{Key: "kafka_dlt-original-offset", Value: []byte{0, 0, 0, 0, 0, 0, 0x01, 0x2c}, Kind: "bytes"},
		{Key: "kafka_dlt-original-partition", Value: []byte{0, 0, 0, 2}, Kind: "bytes"},
		{Key: "other", Value: []byte{0, 0, 0, 2}, Kind: "bytes"},
		{Key: "__connect.errors.offset", Value: []byte("77"), Kind: "bytes"},
	}}
	var b strings.Builder
	if err := inspector(MessageView{M: m}, DLQData{}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		`<td class="mono">300 <span class="muted small">0x000000000000012c</span></td>`,
		`<td class="mono">2 <span class="muted small">0x00000002</span></td>`,
		`<td class="mono">0x00000002</td>`, `<td class="mono">77</td>`, `<td class="kind muted small">bytes</td>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("headers tab lacks %s", want)
		}
	}
}
