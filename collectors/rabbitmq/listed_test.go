package rabbitmq

import (
	"slices"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
	"github.com/queuewatch/queuewatch/queue"
)

// TestListedQueueMissing checks that a dlq_queues name that no watched
// vhost holds is reported once per vhost, as a DLQ with an error and a
// partial note, and that a name held by one watched vhost is not missing
// from the others; with and without the management API.
func TestListedQueueMissing(t *testing.T) {
	a := requireRabbit(t)
	vhA, vhB := a.VHost("listed-a"), a.VHost("listed-b")
	a.queue(vhA, "rc.work.dlq", nil)
	publish(t, channel(t, vhA), "", "rc.work.dlq", text("x"))
	listed := func(_, q string) bool { return q == "rc.work.dlq" || q == "rc.gone.dlq" }
	var refs []QueueRef
	for _, name := range []string{"rc.work.dlq", "rc.gone.dlq"} {
		refs = append(refs, QueueRef{vhA, name}, QueueRef{vhB, name})
	}
	for name, cfg := range map[string]config.RabbitMQ{"amqp only": {}, "management": {ManagementURL: testenv.ManagementURL}} {
		t.Run(name, func(t *testing.T) {
			s := newSource(t, cfg, Options{VHosts: []string{vhA, vhB}, ExplicitDLQ: listed, ExplicitQueues: refs})
			snap := poll(t, s)
			if d := mustDLQ(t, snap, vhA, "rc.work.dlq"); d.Messages != 1 || d.Err != "" || d.Detection != queue.DetectedConfig {
				t.Errorf("rc.work.dlq %+v", d)
			}
			if d, ok := findDLQ(snap, vhB, "rc.work.dlq"); ok {
				t.Errorf("rc.work.dlq reported in %s, where it does not exist, as %+v", vhB, d)
			}
			for _, vh := range []string{vhA, vhB} {
				if d := mustDLQ(t, snap, vh, "rc.gone.dlq"); d.Err != "not found" || d.Detection != queue.DetectedConfig || d.Messages != 0 {
					t.Errorf("rc.gone.dlq in %s: %+v", vh, d)
				}
			}
			want := []string{"queue rc.gone.dlq in vhost " + vhA + ": not found", "queue rc.gone.dlq in vhost " + vhB + ": not found"}
			if !slices.Equal(snap.Partial, want) {
				t.Errorf("partial %q, want %q", snap.Partial, want)
			}
		})
	}
}
