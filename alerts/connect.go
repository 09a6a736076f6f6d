package alerts

import (
	"net/url"
	"strconv"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// Kafka Connect connectors are judged from the states Connect reports at
// this poll alone: Connect knows whether a task runs, so no window or
// previous read is needed. From the most severe:
//
//   - stop: the connector or a task is FAILED (its sentence is the first
//     line of the trace: the exception and its message), or UNASSIGNED (no
//     worker runs it). A failed task never restarts by itself: the sink's
//     consumer group looks merely stalled while its topics fill up.
//   - warn: the connector is PAUSED or STOPPED: an operator halted it, and
//     its tasks do not read until someone resumes it.
//
// and ok otherwise (RUNNING, or RESTARTING on the way back). Shown statuses
// are held by hysteresis like every other reader's (hysteresis.go).

// evaluateConnectors judges latest's connectors, then settles their
// statuses and tracks their onsets.
func (e *Evaluator) evaluateConnectors(latest *queue.Snapshot) {
	for i := range latest.Connectors {
		c := &latest.Connectors[i]
		if c.Err != "" {
			continue // the read error is what it shows
		}
		raw, reason := connectorStatus(c)
		st, since, text := e.settle(connectorOnset(c.Connect, c.Name), raw, latest.Time, latest.Time, func(time.Time) string { return reason })
		c.Status, c.StatusReason, c.StatusSince = st, text, since
	}
}

// connectorStatus judges a connector by the rules at the top of this file.
//
// With a RUNNING connector whose task 0 FAILED on
// "org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded in
// error handler": stop, "task 0 failed: org.apache.kafka.connect.errors.
// ConnectException: Tolerance exceeded in error handler".
func connectorStatus(c *queue.Connector) (queue.Status, string) {
	switch c.State {
	case queue.ConnectFailed:
		return queue.StatusStop, "connector failed: " + orUnknown(c.Trace)
	case queue.ConnectUnassigned:
		return queue.StatusStop, "connector unassigned: no worker runs it"
	}
	if st, reason, bad := taskStatus(c.Tasks); bad {
		return st, reason
	}
	switch c.State {
	case queue.ConnectPaused:
		return queue.StatusWarn, "paused by an operator: its tasks read nothing until it is resumed"
	case queue.ConnectStopped:
		return queue.StatusWarn, "stopped by an operator: no tasks run until it is resumed"
	case queue.ConnectRestarting:
		return queue.StatusOK, "restarting"
	}
	return queue.StatusOK, tasks(c.TasksIn(queue.ConnectRunning)) + " running"
}

// taskStatus is stop for the first failed or unassigned task, naming how
// many more there are; bad is false when no task is.
func taskStatus(ts []queue.ConnectTask) (st queue.Status, reason string, bad bool) {
	var first *queue.ConnectTask
	n := 0
	for i := range ts {
		if t := &ts[i]; t.State == queue.ConnectFailed || t.State == queue.ConnectUnassigned {
			if first == nil || first.State != queue.ConnectFailed && t.State == queue.ConnectFailed {
				first = t
			}
			n++
		}
	}
	if first == nil {
		return queue.StatusOK, "", false
	}
	reason = "task " + strconv.Itoa(first.ID) + " failed: " + orUnknown(first.Trace)
	if first.State == queue.ConnectUnassigned {
		reason = "task " + strconv.Itoa(first.ID) + " unassigned: no worker runs it"
	}
	if n > 1 {
		reason += " (" + strconv.Itoa(n-1) + " more " + queue.Plural(n-1, "task", "tasks") + " not running)"
	}
	return queue.StatusStop, reason, true
}

func orUnknown(trace string) string {
	if trace == "" {
		return "Connect gave no trace"
	}
	return trace
}

// tasks is "1 task" or "n tasks".
func tasks(n int) string { return strconv.Itoa(n) + " " + queue.Plural(n, "task", "tasks") }

func connectorOnset(connect, name string) string {
	return "connector:" + url.PathEscape(connect) + "/" + name
}
