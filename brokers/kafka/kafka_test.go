package kafka

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

var dlqDefaults = config.DLQ{KafkaCursorGroup: config.DefaultKafkaCursorGroup}

// TestSASLMechanisms connects with each supported mechanism to a kfake
// cluster that accepts only that mechanism's user, and with a wrong
// password, which must fail rather than connect.
func TestSASLMechanisms(t *testing.T) {
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(),
				kfake.Superuser(mech, "qw", "s3cret"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			for pass, ok := range map[string]bool{"s3cret": true, "wrong": false} {
				kc, err := New(config.Kafka{
					Name: "k", Brokers: c.ListenAddrs(),
					SASL: &config.SASL{Mechanism: mech, Username: "qw", Password: pass},
				}, dlqDefaults)
				if err != nil {
					t.Fatal(err)
				}
				cl, err := kc.NewClient(kgo.RetryTimeout(time.Second))
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
				_, err = kadm.NewClient(cl).ListBrokers(ctx)
				cancel()
				cl.Close()
				if ok && err != nil {
					t.Errorf("password %s: %v", pass, err)
				}
				if !ok && err == nil {
					t.Errorf("password %s: connected", pass)
				}
			}
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		k    config.Kafka
		dlq  config.DLQ
		want string
	}{
		{
			"no cursor group",
			config.Kafka{Name: "k", Brokers: []string{"k:9092"}},
			config.DLQ{},
			"kafka k: dlq.kafka_cursor_group is required",
		},
		{
			"unknown mechanism",
			config.Kafka{
				Name: "k", Brokers: []string{"k:9092"},
				SASL: &config.SASL{Mechanism: "GSSAPI", Username: "u", Password: "p"},
			},
			dlqDefaults,
			`kafka k: unsupported sasl mechanism "GSSAPI"`,
		},
		{
			"unreadable ca",
			config.Kafka{
				Name: "k", Brokers: []string{"k:9092"},
				TLS: config.TLS{Enabled: true, CAFile: filepath.Join(t.TempDir(), "missing.pem")},
			},
			dlqDefaults,
			"kafka k: tls: read tls ca_file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.k, tt.dlq)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want %q", err, tt.want)
			}
			if tt.name == "unknown mechanism" && !errors.Is(err, errUnsupportedMechanism) {
				t.Errorf("New: %v is not errUnsupportedMechanism", err)
			}
		})
	}
}

// TestOptsOrder checks that options given to New come after a client's
// own, so a test's metadata age wins over a collector's default.
func TestOptsOrder(t *testing.T) {
	kc, err := New(config.Kafka{Name: "k", Brokers: []string{"127.0.0.1:1"}}, dlqDefaults,
		kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kc.NewClient(kgo.MetadataMinAge(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got := cl.OptValue(kgo.MetadataMinAge); got != 10*time.Millisecond {
		t.Errorf("metadata min age %v, want the cluster's 10ms", got)
	}
	if got := cl.OptValue(kgo.ClientID); got != DefaultClientID {
		t.Errorf("client id %v, want %q", got, DefaultClientID)
	}
	if kc.Name() != "k" || kc.CursorGroup() != config.DefaultKafkaCursorGroup {
		t.Errorf("name %q, cursor group %q", kc.Name(), kc.CursorGroup())
	}
}

func TestDLQTopic(t *testing.T) {
	cfg := config.Default()
	cfg.Kafka = []config.Kafka{{Name: "k", Brokers: []string{"k:9092"}, DLQTopics: []string{"payments\\.failed"}}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	kc, err := New(cfg.Kafka[0], cfg.DLQ)
	if err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]queue.DLQDetection{
		"payments.failed": queue.DetectedConfig, "orders.DLT": queue.DetectedName, "orders": "",
	} {
		got, ok := kc.DLQTopic(topic)
		if got != want || ok != (want != "") {
			t.Errorf("DLQTopic(%q) = %q, %v; want %q", topic, got, ok, want)
		}
	}
}

// TestNoClientTelemetry checks that a client of a Cluster never asks the
// broker for a KIP-714 telemetry subscription (the first step of pushing
// client metrics), while a plain franz-go client, doing the same requests
// beside it against a twin cluster, does.
func TestNoClientTelemetry(t *testing.T) {
	subscriptions := func(c *kfake.Cluster) *atomic.Int32 {
		var n atomic.Int32
		c.ControlKey(int16(kmsg.GetTelemetrySubscriptions), func(kmsg.Request) (kmsg.Response, error, bool) {
			n.Add(1) // not handled: the cluster answers, and keeps this counter
			return nil, nil, false
		})
		return &n
	}
	ours, theirs := newFake(t), newFake(t)
	oursAsked, theirsAsked := subscriptions(ours), subscriptions(theirs)

	kc, err := New(config.Kafka{Name: "k", Brokers: ours.ListenAddrs()}, dlqDefaults)
	if err != nil {
		t.Fatal(err)
	}
	ourClient, err := kc.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer ourClient.Close()
	plain, err := kgo.NewClient(kgo.SeedBrokers(theirs.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// franz-go asks for a subscription once a produce or fetch has been
	// timed; queuewatch's collector fetches records for lag in seconds.
	for theirsAsked.Load() == 0 {
		for _, cl := range []*kgo.Client{ourClient, plain} {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := oursAsked.Load(); n != 0 {
		t.Fatalf("queuewatch's client asked for a telemetry subscription %d times; want none", n)
	}
}

func newFake(t *testing.T) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
