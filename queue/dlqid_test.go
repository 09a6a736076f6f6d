package queue

import (
	"errors"
	"testing"
)

func TestDLQIDRoundTrip(t *testing.T) {
	names := []string{"orders.dlq", "a%41-0", "a/b", "x:y:z", "with space", "<b>x</b>&'\"", "日本語.dlq", "%", "%3A", "?#"}
	vhosts := []string{"/", "a:b", "%", "%3A", "prod/eu", "日本", " "}
	for _, n := range names {
		refs := []DLQRef{{Broker: Kafka, Cluster: "c", Name: n}, {Broker: NATS, Cluster: "n", Name: n}}
		for _, vh := range vhosts {
			refs = append(refs, DLQRef{Broker: RabbitMQ, Cluster: "main", VHost: vh, Name: n})
		}
		for _, r := range refs {
			got, err := ParseDLQID(r.ID())
			if err != nil {
				t.Fatalf("ParseDLQID(%q): %v", r.ID(), err)
			}
			if got != r {
				t.Errorf("ParseDLQID(%q) = %+v, want %+v", r.ID(), got, r)
			}
		}
	}
}

func TestDLQIDExamples(t *testing.T) {
	r := DLQRef{Broker: RabbitMQ, Cluster: "main", VHost: "a:b", Name: "q:1"}
	if got, want := r.ID(), "rabbitmq:main:a%3Ab:q:1"; got != want {
		t.Errorf("ID = %q, want %q", got, want)
	}
	d := DLQ{Broker: Kafka, Cluster: "prod", Name: "orders.DLT"}
	if got, want := d.ID(), "kafka:prod::orders.DLT"; got != want {
		t.Errorf("ID = %q, want %q", got, want)
	}
}

func TestParseDLQIDErrors(t *testing.T) {
	for _, id := range []string{"", "kafka", "kafka:c:", "kafka::x:y", "rabbitmq:c::q", "kafka:c:vh:q", "nats:c:vh:q", "nats2:c::q", "rabbitmq:c:%zz:q", "rabbitmq:c:%2:q", "rabbitmq:c:%:q"} {
		if _, err := ParseDLQID(id); !errors.Is(err, ErrBadDLQID) {
			t.Errorf("ParseDLQID(%q) err = %v, want ErrBadDLQID", id, err)
		}
	}
}

// TestReplayCountEncoding: the count is written as decimal text on every
// broker and read back from it, as from the text a RabbitMQ decoder makes
// of the integer older versions wrote; anything else counts as 0.
func TestReplayCountEncoding(t *testing.T) {
	for _, n := range []int64{0, 1, 2, 1 << 40} {
		if got := ParseReplayCount([]byte(FormatReplayCount(n))); got != n {
			t.Errorf("ParseReplayCount(FormatReplayCount(%d)) = %d", n, got)
		}
	}
	if FormatReplayCount(12) != "12" {
		t.Errorf("FormatReplayCount(12) = %q, want decimal text", FormatReplayCount(12))
	}
	for v, want := range map[string]int64{" 3 ": 3, "": 0, "-1": 0, "x": 0, "0x10": 0} {
		m := Message{Headers: []Header{{Key: HeaderReplayCount, Value: []byte(v)}}}
		if got := m.ReplayCount(); got != want {
			t.Errorf("ReplayCount of %q = %d, want %d", v, got, want)
		}
	}
}

// TestReaderIDEscapesItsScope: a reader's ID is a DLQ's format, so a
// vhost holding ':' cannot pose as another vhost and name (a team-B
// queue in vhost "qwp:team-a.evil" is not "qwp" / "team-a.evil").
func TestReaderIDEscapesItsScope(t *testing.T) {
	r := Reader{Broker: RabbitMQ, Cluster: "rmq", Scope: "qwp:team-a.evil", Name: "orders"}
	if got, want := r.ID(), "rabbitmq:rmq:qwp%3Ateam-a.evil:orders"; got != want {
		t.Errorf("ID = %q, want %q", got, want)
	}
	d := DLQ{Broker: RabbitMQ, Cluster: "rmq", VHost: r.Scope, Name: r.Name}
	if r.ID() != d.ID() {
		t.Errorf("a reader's ID %q and a DLQ's %q of one queue differ", r.ID(), d.ID())
	}
	if got := (Reader{Broker: Kafka, Cluster: "prod", Name: "billing"}).ID(); got != "kafka:prod::billing" {
		t.Errorf("a Kafka group's ID = %q", got)
	}
}
