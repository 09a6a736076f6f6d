package queue

import "testing"

// TestConnectorReader: a connector is a reader scoped by its Connect
// cluster, with its running tasks as members, an unknown backlog and a
// page of its own; a read error blanks what was read.
func TestConnectorReader(t *testing.T) {
	c := Connector{
		Cluster: "prod", Connect: "main", Name: "payments sink", Type: "sink", State: ConnectRunning,
		Tasks:  []ConnectTask{{ID: 0, State: ConnectRunning}, {ID: 1, State: ConnectFailed, Trace: "boom"}},
		Status: StatusStop, StatusReason: "task 1 failed: boom",
	}
	r := c.Reader()
	if r.ID() != "kafka:prod:main:payments sink" || r.Title != "connector payments sink" || r.Members != 1 ||
		r.BacklogKnown || r.Status != StatusStop || r.Reason != "task 1 failed: boom" ||
		r.Page != "/kafka/prod/connect/main/connectors/payments%20sink" {
		t.Errorf("Reader = %+v", r)
	}
	c.Err = "read connectors: 503"
	if r := c.Reader(); r.Status != StatusError || r.Reason != c.Err {
		t.Errorf("unread Reader = %s %q, want error", r.Status, r.Reason)
	}
	s := Snapshot{Connectors: []Connector{c}}
	if got, ok := s.Connector("main", "payments sink"); !ok || got.Name != c.Name {
		t.Errorf("Snapshot.Connector = %v %v", got, ok)
	}
	if n := len(s.Readers()); n != 1 {
		t.Errorf("Readers: %d, want the connector", n)
	}
}
