package rabbitmq

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultQuorumDeliveryLimit is the delivery limit RabbitMQ 4.0 and later
// give every quorum queue that sets none (argument or policy). It shows in
// neither, so it has to be inferred from the broker's version.
const DefaultQuorumDeliveryLimit = 20

// versionTTL is how long a version read from the management API is
// trusted: a rolling upgrade from 3.x to 4.x changes it under a running
// queuewatch.
const versionTTL = 10 * time.Minute

// EffectiveDeliveryLimit is the delivery limit a queue of type qtype on a
// broker of version actually enforces: the explicit limit (DeliveryLimit)
// when one is set, else on RabbitMQ 4.0 and later DefaultQuorumDeliveryLimit
// for a quorum queue, unless a negative limit switches it off. An unknown
// version ("") is taken to be 4.x: guessing a limit that is not there
// costs a refused browse, missing one costs a message.
//
// Example: ("4.0.5", "quorum", no argument, no policy) gives (20, true);
// ("3.10.8", "quorum", none) gives (0, false); ("4.0.5", "quorum",
// x-delivery-limit -1) gives (0, false).
func EffectiveDeliveryLimit(version, qtype string, args, policy map[string]any) (int64, bool) {
	if limit, ok := DeliveryLimit(args, policy); ok {
		return limit, true
	}
	if qtype != TypeQuorum || !DefaultsToDeliveryLimit(version) {
		return 0, false
	}
	for _, v := range []any{args["x-delivery-limit"], policy["delivery-limit"]} {
		if n, ok := HeaderInt(v); ok && n < 0 {
			return 0, false
		}
	}
	return DefaultQuorumDeliveryLimit, true
}

// DefaultsToDeliveryLimit reports whether a broker of version gives quorum
// queues a delivery limit by default (4.0 and later, or unknown).
func DefaultsToDeliveryLimit(version string) bool {
	major, _, _ := strings.Cut(version, ".")
	n, err := strconv.Atoi(major)
	return err != nil || n >= 4
}

// Version is the broker's RabbitMQ version: from the management API
// (/api/overview, read at most every ten minutes), else from the server
// properties of the last AMQP connection any user of the cluster opened;
// "" when neither has answered yet.
func (c *Cluster) Version(ctx context.Context) string {
	if c.mgmt != nil {
		if v, err := c.mgmt.Version(ctx); err == nil && v != "" {
			return v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.amqpVersion
}

// noteServerVersion records the version an AMQP server announced.
func (c *Cluster) noteServerVersion(props map[string]any) {
	v, _ := props["version"].(string)
	if v == "" {
		return
	}
	c.mu.Lock()
	c.amqpVersion = v
	c.mu.Unlock()
	if c.mgmt != nil {
		c.mgmt.learnVersion(v)
	}
}

// Version is the broker's version (rabbitmq_version of /api/overview),
// read once and then again when older than ten minutes.
func (m *Client) Version(ctx context.Context) (string, error) {
	m.verMu.Lock()
	v, at := m.version, m.versionAt
	m.verMu.Unlock()
	if v != "" && time.Since(at) < versionTTL {
		return v, nil
	}
	var out struct {
		Version string `json:"rabbitmq_version"`
	}
	if err := m.Get(ctx, APIPath("overview"), url.Values{"columns": {"rabbitmq_version"}}, &out); err != nil {
		return v, err
	}
	m.verMu.Lock()
	m.version, m.versionAt = out.Version, time.Now()
	m.verMu.Unlock()
	return out.Version, nil
}

// learnVersion takes a version announced over AMQP until the management
// API is asked, so that it is not asked only for this.
func (m *Client) learnVersion(v string) {
	m.verMu.Lock()
	defer m.verMu.Unlock()
	if m.version == "" {
		m.version, m.versionAt = v, time.Now()
	}
}

// knownVersion is the cached version without asking the broker.
func (m *Client) knownVersion() string {
	m.verMu.Lock()
	defer m.verMu.Unlock()
	return m.version
}

// DeliveryLimit is the delivery limit the broker enforces on a queue of
// type qtype with these arguments and effective policy, with the
// cluster's version (see Version) deciding RabbitMQ 4's default.
func (c *Cluster) DeliveryLimit(ctx context.Context, qtype string, args, policy map[string]any) (int64, bool) {
	return EffectiveDeliveryLimit(c.Version(ctx), qtype, args, policy)
}
