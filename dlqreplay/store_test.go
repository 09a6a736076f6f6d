package dlqreplay_test

import (
	"context"
	"errors"
	"testing"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/dlqreplay/audit"
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
