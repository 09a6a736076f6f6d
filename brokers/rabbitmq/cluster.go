package rabbitmq

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// defaultDialTimeout bounds connecting when the caller's context has no
// deadline.
const defaultDialTimeout = 10 * time.Second

// heartbeat is the AMQP heartbeat of every connection: a dead peer is
// noticed within about twice this.
const heartbeat = 10 * time.Second

// Cluster is the access to one configured RabbitMQ cluster.
type Cluster struct {
	name string
	url  string
	uri  amqp.URI
	tls  *tls.Config
	mgmt *Client // nil without a management URL
	// exporter reads rabbitmq_prometheus; nil without a management URL
	// (the plugin alone cannot discover DLQs) or with prometheus_url none.
	exporter *Exporter
	shown    string // url with the password redacted

	// DialTimeout bounds the TCP connect and the AMQP handshake when the
	// context has no deadline.
	DialTimeout time.Duration

	// mu guards the state users of the cluster share: what the broker
	// said about itself and what browsing saw.
	mu          sync.Mutex
	amqpVersion string // from the last AMQP handshake
	heads       map[headKey]HeadSighting
}

// New builds the access to cfg's cluster. It checks the URLs and loads the
// TLS files; it does not connect.
func New(cfg config.RabbitMQ) (*Cluster, error) {
	uri, err := amqp.ParseURI(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("rabbitmq %s: url: %w", cfg.Name, err)
	}
	tlsCfg, err := cfg.TLS.Config()
	if err != nil {
		return nil, fmt.Errorf("rabbitmq %s: tls: %w", cfg.Name, err)
	}
	c := &Cluster{name: cfg.Name, url: cfg.URL, uri: uri, tls: tlsCfg, shown: redactURL(cfg.URL), DialTimeout: defaultDialTimeout}
	if cfg.ManagementURL != "" {
		user, pass := cfg.ManagementCredentials()
		if c.mgmt, err = NewClient(cfg.ManagementURL, user, pass, tlsCfg); err != nil {
			return nil, fmt.Errorf("rabbitmq %s: %w", cfg.Name, err)
		}
		if c.exporter, err = newClusterExporter(cfg, tlsCfg); err != nil {
			return nil, fmt.Errorf("rabbitmq %s: %w", cfg.Name, err)
		}
	}
	return c, nil
}

// newClusterExporter is the plugin reader of cfg: prometheus_url, else
// the plugin's default port on the management API's host.
func newClusterExporter(cfg config.RabbitMQ, tlsCfg *tls.Config) (*Exporter, error) {
	base := cfg.PrometheusURL
	switch base {
	case config.PrometheusNone:
		return nil, nil
	case "":
		var err error
		if base, err = ExporterURL(cfg.ManagementURL); err != nil {
			return nil, err
		}
	}
	return NewExporter(base, tlsCfg)
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable url)"
	}
	return u.Redacted()
}

// Name is the configured cluster name.
func (c *Cluster) Name() string { return c.name }

// URL is the AMQP URL with its password redacted, for messages.
func (c *Cluster) URL() string { return c.shown }

// VHost is the URL's vhost ("/" when the URL names none).
func (c *Cluster) VHost() string { return c.uri.Vhost }

// User is the AMQP user, which the broker requires in a user_id property.
func (c *Cluster) User() string { return c.uri.Username }

// Management is the management API client, or nil when the cluster has no
// management URL.
func (c *Cluster) Management() *Client { return c.mgmt }

// Exporter is the rabbitmq_prometheus reader, or nil when the cluster has
// no management URL or its prometheus_url is none.
func (c *Cluster) Exporter() *Exporter { return c.exporter }

// TLS is the TLS configuration every connection uses, nil when TLS is not
// configured (an amqps:// or https:// URL then uses the system roots).
func (c *Cluster) TLS() *tls.Config { return c.tls }

// Dial connects to vhost; see DialSocket.
func (c *Cluster) Dial(ctx context.Context, vhost, connectionName string) (*amqp.Connection, error) {
	conn, _, err := c.DialSocket(ctx, vhost, connectionName)
	return conn, err
}

// DialSocket connects to vhost, whatever vhost the URL names, and also
// returns the TCP connection under it: closing that fails every operation
// on the connection at once, where Close waits for the broker. The TCP
// connect and the AMQP handshake are bounded by ctx's deadline, or
// DialTimeout without one; the connection then outlives ctx. An amqps://
// URL connects with the cluster's TLS settings (CA, client certificate,
// server name); an amqp:// one connects in plain text whatever TLS says,
// so that a cluster whose management API alone is on https:// keeps
// working.
// connectionName is shown in the broker's connection list.
//
// A wrong user or password is refused with ACCESS_REFUSED (403). RabbitMQ
// withholds that answer for 3 s (it tells only clients advertising
// authentication_failure_close at once, which amqp091 does not), and
// amqp091 reports any failure after the login as ErrCredentials: a failure
// after the deadline is therefore reported as the deadline, one before it
// as the broker's refusal.
func (c *Cluster) DialSocket(ctx context.Context, vhost, connectionName string) (*amqp.Connection, net.Conn, error) {
	var raw net.Conn
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(c.DialTimeout)
	}
	cfg := amqp.Config{
		Vhost:           vhost,
		TLSClientConfig: c.tls,
		Heartbeat:       heartbeat,
		Properties:      amqp.Table{"connection_name": connectionName},
		Dial: func(network, addr string) (net.Conn, error) {
			d := net.Dialer{Deadline: deadline}
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			// amqp091 clears the deadline once the handshake is done.
			if err := conn.SetDeadline(deadline); err != nil {
				_ = conn.Close() // the dial failed; the error returned says why
				return nil, err
			}
			raw = conn
			return conn, nil
		},
	}
	conn, err := amqp.DialConfig(c.url, cfg)
	if err != nil {
		if !time.Now().Before(deadline) && !isServerError(err) {
			return nil, nil, fmt.Errorf("amqp vhost %q: no answer before the deadline: %w", vhost, context.DeadlineExceeded)
		}
		return nil, nil, fmt.Errorf("amqp vhost %q: %w", vhost, amqpHint(err))
	}
	c.noteServerVersion(conn.Properties)
	return conn, raw, nil
}

// isServerError reports whether err is a connection.close the broker sent.
func isServerError(err error) bool {
	var ae *amqp.Error
	return errors.As(err, &ae) && ae.Server
}

// IsAccessRefused reports whether the broker refused the login (AMQP 403
// ACCESS_REFUSED: a wrong user or password), which no retry will cure.
func IsAccessRefused(err error) bool {
	var ae *amqp.Error
	return errors.As(err, &ae) && ae.Code == amqp.AccessRefused
}

// amqpHint adds the setting to check to credential and vhost refusals.
// RabbitMQ's own ACCESS_REFUSED close reaches only clients that ask for it,
// so a socket closed during the login is named for what it is.
func amqpHint(err error) error {
	var ae *amqp.Error
	switch {
	case errors.Is(err, amqp.ErrCredentials):
		return fmt.Errorf("ACCESS_REFUSED: %w: check the credentials in url", err)
	case errors.As(err, &ae) && ae.Code == amqp.AccessRefused:
		return fmt.Errorf("%w: check the credentials in url and the user's vhost permissions", err)
	case errors.As(err, &ae) && ae.Server && ae.Code == amqp.NotAllowed && strings.HasSuffix(ae.Reason, " not found"):
		return notFound{err} // "NOT_ALLOWED - vhost x not found"
	case errors.Is(err, amqp.ErrVhost):
		return fmt.Errorf("%w: check the user's vhost permissions", err)
	}
	return err
}

// notFound is a broker refusal that names something missing; it matches
// queue.ErrNotFound and keeps the broker's words.
type notFound struct{ error }

func (e notFound) Unwrap() error { return e.error }

func (notFound) Is(target error) bool { return target == queue.ErrNotFound }

// IsNotFound reports whether the broker refused an operation because its
// queue or exchange does not exist (the channel is closed then).
func IsNotFound(err error) bool {
	var ae *amqp.Error
	return errors.As(err, &ae) && ae.Code == amqp.NotFound
}
