package dlqreplay_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/audit"
	"github.com/queuewatch/queuewatch/queue"
)

// The Service's tests that need a Store live in the external test package:
// dlqreplay/audit imports dlqreplay, so the internal tests cannot import it.

func TestStartRefusesUnknownDLQ(t *testing.T) {
	st, err := audit.Open(context.Background(), t.TempDir())
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
	st, err := audit.Open(context.Background(), t.TempDir())
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
