package nats_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	collectnats "github.com/queuewatch/queuewatch/collectors/nats"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// natsCLI runs the real nats CLI against url and returns its output.
func natsCLI(t *testing.T, bin, url string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, append([]string{"-s", url}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("nats %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TestRealServerMatchesCLI: against a real nats-server process, with the
// stream, consumers and traffic made by the real nats CLI, queuewatch's
// numbers are what `nats consumer info -j` says.
func TestRealServerMatchesCLI(t *testing.T) {
	srv := testenv.NATSProcess(t)
	cli := testenv.NATSCLI(t)
	natsCLI(t, cli, srv.URL, "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults")
	natsCLI(t, cli, srv.URL, "consumer", "add", "ORDERS", "worker", "--pull", "--ack", "explicit", "--deliver", "all", "--max-pending", "4", "--defaults")
	natsCLI(t, cli, srv.URL, "consumer", "add", "ORDERS", "eu", "--pull", "--ack", "explicit", "--deliver", "all", "--filter", "orders.eu", "--defaults")
	natsCLI(t, cli, srv.URL, "pub", "orders.eu", "eu {{Count}}", "--count", "7")
	natsCLI(t, cli, srv.URL, "pub", "orders.us", "us {{Count}}", "--count", "5")
	natsCLI(t, cli, srv.URL, "consumer", "next", "ORDERS", "worker", "--count", "3", "--ack")
	natsCLI(t, cli, srv.URL, "consumer", "next", "ORDERS", "worker", "--count", "4", "--no-ack")
	natsCLI(t, cli, srv.URL, "consumer", "next", "ORDERS", "eu", "--count", "2", "--ack")

	cl, err := brokernats.New(config.NATS{Name: "real", URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := collectnats.New(collectnats.Options{Cluster: cl})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	snap := poll(t, s)

	for _, tc := range []struct {
		name                string
		pending             uint64
		ackPending, redeliv int
		delivered, ackFloor uint64
	}{
		// worker read 7 of 12 and acked the first 3; max_ack_pending 4 is reached.
		{name: "worker", pending: 5, ackPending: 4, delivered: 7, ackFloor: 3},
		// eu sees only the 7 orders.eu messages and acked 2.
		{name: "eu", pending: 5, delivered: 2, ackFloor: 2},
	} {
		var info struct {
			NumPending     uint64 `json:"num_pending"`
			NumAckPending  int    `json:"num_ack_pending"`
			NumRedelivered int    `json:"num_redelivered"`
			NumWaiting     int    `json:"num_waiting"`
			Delivered      struct {
				Stream uint64 `json:"stream_seq"`
			} `json:"delivered"`
			AckFloor struct {
				Stream uint64 `json:"stream_seq"`
			} `json:"ack_floor"`
			Config struct {
				MaxAckPending int `json:"max_ack_pending"`
			} `json:"config"`
		}
		if err := json.Unmarshal(natsCLI(t, cli, srv.URL, "consumer", "info", "ORDERS", tc.name, "-j"), &info); err != nil {
			t.Fatal(err)
		}
		c := consumerOf(t, snap, "ORDERS", tc.name)
		if c.Pending != info.NumPending || c.AckPending != info.NumAckPending || c.Redelivered != info.NumRedelivered ||
			c.Waiting != info.NumWaiting || c.DeliveredSeq != info.Delivered.Stream || c.AckFloorSeq != info.AckFloor.Stream ||
			c.MaxAckPending != info.Config.MaxAckPending {
			t.Errorf("%s: queuewatch %+v, nats consumer info %+v", tc.name, c, info)
		}
		if c.Pending != tc.pending || c.AckPending != tc.ackPending || c.DeliveredSeq != tc.delivered || c.AckFloorSeq != tc.ackFloor {
			t.Errorf("%s: pending %d ack pending %d delivered %d ack floor %d, want %+v", tc.name, c.Pending, c.AckPending, c.DeliveredSeq, c.AckFloorSeq, tc)
		}
	}
	// The lag of eu is the age of its next orders.eu message, seq 3.
	var msg struct {
		Time string `json:"time"`
	}
	if err := json.Unmarshal(natsCLI(t, cli, srv.URL, "stream", "get", "ORDERS", "3", "-j"), &msg); err != nil {
		t.Fatal(err)
	}
	eu := consumerOf(t, snap, "ORDERS", "eu")
	stored, err := time.Parse(time.RFC3339Nano, msg.Time)
	if err != nil {
		t.Fatal(err)
	}
	if want := snap.Time.Sub(stored).Seconds(); eu.LagSeconds != want {
		t.Errorf("eu lag seconds = %v, want %v (age of seq 3 as nats stream get shows it)", eu.LagSeconds, want)
	}
}
