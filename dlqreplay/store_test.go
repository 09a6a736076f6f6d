package dlqreplay_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/store"
)

// The Service's tests that need a Store live in the external test package:
// package store imports dlqreplay, so the internal tests cannot import it.

func TestStartRefusesUnknownDLQ(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	svc, err := dlqreplay.New(dlqreplay.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  dlqreplay.Request
		want error
	}{
		{"unknown cluster", dlqreplay.Request{DLQ: "kafka:nope::t", Selection: dlqreplay.Selection{All: true}}, dlqreplay.ErrUnknownDLQ},
		{"bad id", dlqreplay.Request{DLQ: "x"}, dlqreplay.ErrUnknownDLQ},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := svc.Start(context.Background(), tt.req); !errors.Is(err, tt.want) {
				t.Fatalf("Start = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestNewRequiresStore(t *testing.T) {
	if _, err := dlqreplay.New(dlqreplay.Options{}); err == nil {
		t.Fatal("New without a store succeeded")
	}
}

// TestNoReplayBroker: a DLQ of a broker declared without a backend
// (Options.NoReplay) is refused by browse and start with ErrNoReplay, an
// ErrUnknownDLQ whose message says why; another broker's unknown cluster
// still reads "no cluster".
func TestNoReplayBroker(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	svc, err := dlqreplay.New(dlqreplay.Options{Store: st, NoReplay: []queue.Broker{queue.SQS}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Browse(context.Background(), "sqs:prod::orders-dlq", dlqreplay.BrowseOptions{Limit: 10})
	if !errors.Is(err, dlqreplay.ErrNoReplay) || !errors.Is(err, dlqreplay.ErrUnknownDLQ) || !strings.Contains(err.Error(), "no browsing or replay for sqs yet") {
		t.Errorf("Browse = %v, want ErrNoReplay saying so", err)
	}
	if _, err := svc.Start(context.Background(), dlqreplay.Request{DLQ: "sqs:prod::orders-dlq", Selection: dlqreplay.Selection{All: true}}); !errors.Is(err, dlqreplay.ErrNoReplay) {
		t.Errorf("Start = %v, want ErrNoReplay", err)
	}
	if _, err := svc.Start(context.Background(), dlqreplay.Request{DLQ: "kafka:nope::t", Selection: dlqreplay.Selection{All: true}}); errors.Is(err, dlqreplay.ErrNoReplay) || !errors.Is(err, dlqreplay.ErrUnknownDLQ) {
		t.Errorf("Start on an unknown Kafka cluster = %v, want ErrUnknownDLQ alone", err)
	}
}

// TestReceiptOf: the receipt of a job already read adds its outcomes to
// that read, without reading the job again; a read that says running, of
// a job not running here (another replica's, or ended since), is read
// again so its state matches its outcomes.
func TestReceiptOf(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	svc, err := dlqreplay.New(dlqreplay.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	j := dlqreplay.Job{ID: "job-a", DLQ: "rabbitmq:main:/:orders.dlq", Action: dlqreplay.ActionReplay, Who: "ann", State: dlqreplay.StateRunning}
	if err := st.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	read, err := svc.Job(ctx, "job-a")
	if err != nil {
		t.Fatal(err)
	}
	ended := j
	ended.State = dlqreplay.StateSucceeded
	if err := st.UpdateJob(ctx, ended, 0, []dlqreplay.Outcome{{MessageID: "m-1", Result: dlqreplay.ResultMoved}}); err != nil {
		t.Fatal(err)
	}
	r, err := svc.ReceiptOf(ctx, read)
	if err != nil || r.Job.State != dlqreplay.StateSucceeded || len(r.Outcomes) != 1 {
		t.Fatalf("receipt of a running read of an ended job: %+v %v", r, err)
	}
	r.Job.Note = "from the caller's read"
	again, err := svc.ReceiptOf(ctx, r.Job)
	if err != nil || again.Job.Note != r.Job.Note || len(again.Outcomes) != 1 {
		t.Fatalf("receipt of an ended job's read: %+v %v (want the read itself and its outcome)", again, err)
	}
}
