package alerts

import (
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

const failTrace = "org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded in error handler"

// connector is a sink in state with one task per state of tasks, task 0 first.
func connector(state string, tasks ...string) *queue.Connector {
	c := &queue.Connector{Cluster: "k", Connect: "main", Name: "payments-sink", Type: "sink", State: state}
	for i, st := range tasks {
		t := queue.ConnectTask{ID: i, State: st}
		if st == queue.ConnectFailed {
			t.Trace = failTrace
		}
		c.Tasks = append(c.Tasks, t)
	}
	return c
}

// TestConnectorStatus: a failed or unassigned connector or task is a stop
// with the trace's first line, a paused or stopped connector a warn,
// anything else ok.
func TestConnectorStatus(t *testing.T) {
	failed := connector(queue.ConnectFailed)
	failed.Trace = "java.lang.NoClassDefFoundError: io/acme/Sink"
	tests := []struct {
		name       string
		c          *queue.Connector
		want       queue.Status
		wantReason string
	}{
		{"running", connector(queue.ConnectRunning, queue.ConnectRunning, queue.ConnectRunning), queue.StatusOK, "2 tasks running"},
		{"running, no tasks", connector(queue.ConnectRunning), queue.StatusOK, "0 tasks running"},
		{"task failed", connector(queue.ConnectRunning, queue.ConnectRunning, queue.ConnectFailed), queue.StatusStop, "task 1 failed: " + failTrace},
		{"tasks failed and unassigned", connector(queue.ConnectRunning, queue.ConnectUnassigned, queue.ConnectFailed, queue.ConnectFailed), queue.StatusStop, "task 1 failed: " + failTrace + " (2 more tasks not running)"},
		{"task unassigned", connector(queue.ConnectRunning, queue.ConnectUnassigned), queue.StatusStop, "task 0 unassigned: no worker runs it"},
		{"connector failed", failed, queue.StatusStop, "connector failed: java.lang.NoClassDefFoundError: io/acme/Sink"},
		{"connector unassigned", connector(queue.ConnectUnassigned), queue.StatusStop, "connector unassigned: no worker runs it"},
		{"paused", connector(queue.ConnectPaused, queue.ConnectPaused), queue.StatusWarn, "paused by an operator: its tasks read nothing until it is resumed"},
		{"paused with a failed task", connector(queue.ConnectPaused, queue.ConnectFailed), queue.StatusStop, "task 0 failed: " + failTrace},
		{"stopped", connector(queue.ConnectStopped), queue.StatusWarn, "stopped by an operator: no tasks run until it is resumed"},
		{"restarting", connector(queue.ConnectRestarting, queue.ConnectRestarting), queue.StatusOK, "restarting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := connectorStatus(tt.c)
			if got != tt.want || reason != tt.wantReason {
				t.Errorf("connectorStatus = %s %q; want %s %q", got, reason, tt.want, tt.wantReason)
			}
		})
	}
}

// TestConnectorsJudgedByTheEvaluator: the Evaluator fills the status the
// reader shows, holds a new one for hysteresis_polls polls, keeps its
// onset, and shows a read error as an error.
func TestConnectorsJudgedByTheEvaluator(t *testing.T) {
	e := NewEvaluator(StatusOptions{HysteresisPolls: 2})
	poll := func(i int, c *queue.Connector) *queue.Connector {
		s := &queue.Snapshot{Broker: queue.Kafka, Cluster: "k", Time: t0.Add(time.Duration(i) * time.Minute), Connectors: []queue.Connector{*c}}
		e.Evaluate(s)
		return &s.Connectors[0]
	}
	running := connector(queue.ConnectRunning, queue.ConnectRunning)
	dead := connector(queue.ConnectRunning, queue.ConnectFailed)
	if c := poll(0, running); c.Reader().Status != queue.StatusOK {
		t.Fatalf("first poll: %s %q, want ok", c.Status, c.StatusReason)
	}
	if c := poll(1, dead); c.Reader().Status != queue.StatusOK {
		t.Errorf("one poll of a failed task: %s, want ok held by hysteresis", c.Status)
	}
	c := poll(2, dead)
	r := c.Reader()
	if r.Status != queue.StatusStop || r.Reason != "task 0 failed: "+failTrace || !r.StatusSince.Equal(t0.Add(time.Minute)) {
		t.Errorf("two polls of a failed task: %s %q since %v; want stop with the trace since %v", r.Status, r.Reason, r.StatusSince, t0.Add(time.Minute))
	}
	unread := *dead
	unread.Err = "list connectors: 401 Unauthorized"
	if r := poll(3, &unread).Reader(); r.Status != queue.StatusError || r.Reason != unread.Err {
		t.Errorf("unread: %s %q, want error with the read error", r.Status, r.Reason)
	}
}
