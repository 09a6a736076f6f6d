package kafka

import (
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// DefaultClientID is sent to the brokers when the config sets no client_id,
// so that broker logs, quotas and ACLs can tell queuewatch apart.
const DefaultClientID = "queuewatch"

// Cluster is the access to one configured Kafka cluster, shared by its
// collector and its replay backend. It is immutable and safe for
// concurrent use.
type Cluster struct {
	cfg config.Kafka
	dlq config.DLQ
	// opts connect to the cluster; extra come after every client's own
	// options (see New).
	opts, extra []kgo.Opt
	// connects are the cluster's Kafka Connect clusters, in config order.
	connects []*Connect
}

// New builds the access to cluster k. dlq is the configuration's dlq
// section: its kafka_cursor_group (required; config supplies the default)
// and its name_pattern. extra are added to every client of the cluster
// after the client's own options, so they win; tests use them for short
// metadata ages and hooks. New does no network I/O; it reads the TLS
// files, an OAUTHBEARER client_secret_file and AWS_MSK_IAM's AWS config
// files.
func New(k config.Kafka, dlq config.DLQ, extra ...kgo.Opt) (*Cluster, error) {
	if dlq.KafkaCursorGroup == "" {
		return nil, fmt.Errorf("kafka %s: dlq.kafka_cursor_group is required", k.Name)
	}
	tlsCfg, err := k.TLS.Config()
	if err != nil {
		return nil, fmt.Errorf("kafka %s: tls: %w", k.Name, err)
	}
	mech, err := saslMechanism(k.SASL)
	if err != nil {
		return nil, fmt.Errorf("kafka %s: %w", k.Name, err)
	}
	clientID := k.ClientID
	if clientID == "" {
		clientID = DefaultClientID
	}
	// No KIP-714 client telemetry: queuewatch watches the clusters it
	// connects to and should not feed them metrics about itself. Where a
	// broker subscribes every client (kfake does; managed clusters may),
	// franz-go's push compresses each report with lz4 into two pooled 4 MiB
	// blocks: 8 MiB of queuewatch's heap for a report nobody asked it for.
	opts := []kgo.Opt{kgo.SeedBrokers(k.Brokers...), kgo.ClientID(clientID), kgo.DisableClientMetrics()}
	if tlsCfg != nil {
		// franz-go verifies each broker against its own host name unless
		// the config names the one the certificates carry.
		opts = append(opts, kgo.DialTLSConfig(tlsCfg))
	}
	if mech != nil {
		opts = append(opts, kgo.SASL(mech))
	}
	connects := make([]*Connect, 0, len(k.Connect))
	for _, cc := range k.Connect {
		c, err := newConnect(cc)
		if err != nil {
			return nil, fmt.Errorf("kafka %s: %w", k.Name, err)
		}
		connects = append(connects, c)
	}
	return &Cluster{cfg: k, dlq: dlq, opts: opts, extra: slices.Clone(extra), connects: connects}, nil
}

// Connects are the Kafka Connect clusters working on the cluster, in
// config order.
func (c *Cluster) Connects() []*Connect { return c.connects }

// errUnsupportedMechanism is returned for a SASL mechanism franz-go is not
// given here; config validation rejects it first.
var errUnsupportedMechanism = errors.New("unsupported sasl mechanism")

// saslMechanism is the franz-go mechanism for the configured credentials,
// nil when the cluster needs no SASL. An OAUTHBEARER mechanism caches its
// token for every client of the cluster.
func saslMechanism(s *config.SASL) (sasl.Mechanism, error) {
	if s == nil {
		return nil, nil
	}
	switch s.Mechanism {
	case config.MechanismPlain:
		return plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism(), nil
	case config.MechanismSCRAM256:
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha256Mechanism(), nil
	case config.MechanismSCRAM512:
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha512Mechanism(), nil
	case config.MechanismOAuthBearer:
		return oauthMechanism(s)
	case config.MechanismMSKIAM:
		return mskMechanism(s)
	}
	return nil, fmt.Errorf("%w %q (want PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or AWS_MSK_IAM)", errUnsupportedMechanism, s.Mechanism)
}

// Name is the configured cluster name, the cluster label everywhere.
func (c *Cluster) Name() string { return c.cfg.Name }

// CursorGroup is the consumer group whose committed offsets mark how far
// each dead-letter topic has been replayed: the collector counts DLQ depth
// from it and the replay backend commits to it.
func (c *Cluster) CursorGroup() string { return c.dlq.KafkaCursorGroup }

// Opts are the options of a new client of this cluster: the connection
// (seeds, client id, TLS, SASL), then the client's own extra options, then
// those given to New.
func (c *Cluster) Opts(extra ...kgo.Opt) []kgo.Opt {
	out := make([]kgo.Opt, 0, len(c.opts)+len(extra)+len(c.extra))
	out = append(out, c.opts...)
	out = append(out, extra...)
	return append(out, c.extra...)
}

// NewClient creates a client of this cluster with Opts(extra...). It does
// not connect until its first request.
func (c *Cluster) NewClient(extra ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(c.Opts(extra...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client %s: %w", c.cfg.Name, err)
	}
	return cl, nil
}

// DLQTopic reports whether topic is a dead-letter topic and why: listed in
// the cluster's dlq_topics, or named like one by dlq.name_pattern.
func (c *Cluster) DLQTopic(topic string) (queue.DLQDetection, bool) {
	switch {
	case c.cfg.IsDLQTopic(topic):
		return queue.DetectedConfig, true
	case c.dlq.IsDLQName(topic):
		return queue.DetectedName, true
	}
	return "", false
}
