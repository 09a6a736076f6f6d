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
