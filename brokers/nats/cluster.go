package nats

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/queuewatch/queuewatch/config"
)

// defaultDialTimeout bounds connecting when the caller's context has no
// deadline.
const defaultDialTimeout = 10 * time.Second

// Cluster is the access to one configured NATS cluster.
type Cluster struct {
	cfg   config.NATS
	tls   *tls.Config
	shown string // URLs with passwords redacted

	// DialTimeout bounds connecting when the context has no deadline.
	DialTimeout time.Duration

	counters // dead-letter capture
	health   captureHealth
	// tune is capture's timing; the zero value is the defaults (tests
	// shorten it).
	tune captureTuning
}

// New builds the access to cfg's cluster. It loads the TLS files; it does
// not connect.
func New(cfg config.NATS) (*Cluster, error) {
	tlsCfg, err := cfg.TLS.Config()
	if err != nil {
		return nil, fmt.Errorf("nats %s: tls: %w", cfg.Name, err)
	}
	shown := make([]string, 0, len(cfg.URLs()))
	for _, u := range cfg.URLs() {
		shown = append(shown, redactURL(u))
	}
	return &Cluster{cfg: cfg, tls: tlsCfg, shown: strings.Join(shown, ","), DialTimeout: defaultDialTimeout}, nil
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable url)"
	}
	return u.Redacted()
}

// Name is the configured cluster name.
func (c *Cluster) Name() string { return c.cfg.Name }

// URL is the configured URLs with passwords redacted, for messages.
func (c *Cluster) URL() string { return c.shown }

// Config is the cluster's configuration section.
func (c *Cluster) Config() config.NATS { return c.cfg }

// Connect opens a connection named "queuewatch <purpose>" (the name the
// server shows in its connection list) and its JetStream context. The
// caller closes the connection. Reconnects are left to the caller's next
// poll or job rather than hidden behind a buffer that could hold publishes.
func (c *Cluster) Connect(ctx context.Context, purpose string) (*nats.Conn, jetstream.JetStream, error) {
	timeout := c.DialTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	opts := []nats.Option{
		nats.Name("queuewatch " + purpose),
		nats.Timeout(timeout),
		nats.NoReconnect(),
	}
	opts = append(opts, c.authOptions()...)
	if c.tls != nil {
		opts = append(opts, nats.Secure(c.tls))
	}
	nc, err := nats.Connect(strings.Join(c.cfg.URLs(), ","), opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("nats %s: connect %s: %w", c.cfg.Name, c.shown, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("nats %s: jetstream: %w", c.cfg.Name, err)
	}
	return nc, js, nil
}

func (c *Cluster) authOptions() []nats.Option {
	switch {
	case c.cfg.CredsFile != "":
		return []nats.Option{nats.UserCredentials(c.cfg.CredsFile)}
	case c.cfg.NKeyFile != "":
		opt, err := nats.NkeyOptionFromSeed(c.cfg.NKeyFile)
		if err != nil {
			// Surfaces at connect: the option reports the error.
			return []nats.Option{func(*nats.Options) error { return fmt.Errorf("nkey_file: %w", err) }}
		}
		return []nats.Option{opt}
	case c.cfg.Token != "":
		return []nats.Option{nats.Token(c.cfg.Token)}
	case c.cfg.User != "":
		return []nats.Option{nats.UserInfo(c.cfg.User, c.cfg.Password)}
	}
	return nil
}
