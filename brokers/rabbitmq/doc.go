// Package rabbitmq is the one way queuewatch reaches a RabbitMQ cluster.
//
// A Cluster is built once per configured cluster (config.RabbitMQ) and
// shared by the collector and the replay backend, so both connect with
// the same AMQP URL, the same TLS settings (CA, client certificate,
// server name) and the same management API credentials; a setting added
// here reaches every connection at once. It holds:
//
//   - Dial, which opens an AMQP connection to any vhost of the cluster
//     with a heartbeat, a bounded handshake and, for an amqps:// URL, the
//     configured TLS settings;
//   - Management, the management HTTP API client (over the same TLS
//     settings) with the typed reads both users need;
//   - the broker facts that are not one component's business: queue
//     types, the effective delivery limit, and the x-death header.
//
// The package holds no connection of its own: whoever dials owns the
// connection, so the collector's long-lived per-vhost connections and a
// replay job's short-lived ones fail independently.
package rabbitmq
