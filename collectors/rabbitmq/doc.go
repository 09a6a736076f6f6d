// Package rabbitmq polls one RabbitMQ cluster's queues through the
// rabbitmq_prometheus plugin and the management HTTP API and measures
// dead-letter queues exactly over AMQP, turning them into a queue.Snapshot.
//
// Depths and consumers come from the plugin's detailed queue families on
// every poll when it answers for every queue (readView, plugin.go): one
// scrape costs the node about a tenth of a management listing of the same
// queues. The management listing, which alone carries what DLQ detection
// and rates need (type, arguments, policies, message_stats counters), is
// read every ListEvery-th poll and whenever the plugin shows queues come
// or go; the polls between reuse it, its topology and its counters, which
// keep the listing's time (queue.Queue.CountersAt) so that rates are
// deltas between listings. A plugin that fails, is absent or sees only
// some queues (a cluster whose queues run on several nodes) is set aside
// for ListEvery listings, and every poll lists as below meanwhile. When a
// due listing fails but the plugin answers, the poll keeps every queue with
// the plugin's depths and the last listing's rest, marked partial.
//
// A listing poll costs a handful of HTTP requests whatever the number of
// queues:
//
//  1. /api/vhosts, unless vhosts are configured;
//  2. /api/queues/{vhost} for each vhost, paged 500 queues at a time and
//     trimmed with columns=. Paging per vhost rather than over /api/queues
//     matters: the broker builds each page from the whole list it was asked
//     for, so with 10,000 queues a cluster-wide page took about 0.4 s and a
//     per-vhost page about 0.1 s. Most of a page's cost is adding statistics
//     to its queues, which the broker does one page at a time whatever the
//     number of requests in flight. The statistics view is used rather than
//     disable_stats=true: on 3.10 disable_stats drops consumers,
//     effective_policy_definition, policy and head_message_timestamp, and
//     with enable_queue_totals it was slower (it asks every queue process),
//     while columns= already cuts the payload about six times. The same
//     listing carries each queue's message_stats counters and
//     consumer_utilisation (dotted columns=), from which status
//     evaluation takes its rates and stall: no request of their own;
//  3. /api/exchanges and /api/bindings, only for vhosts where some queue
//     dead-letters (cluster-wide when more than two do), to resolve where
//     dead letters go.
//
// Policies reach the management API's queue objects with the statistics,
// so a policy change shows after about five seconds, at the next listing.
//
// A queue is a DLQ, in order of trust, when the configuration says so, when
// another queue dead-letters into it, or when its name matches the DLQ name
// pattern. Topology resolution follows the DLX's type (direct, topic with *
// and #, fanout, headers as "every binding"), exchange-to-exchange bindings,
// alternate exchanges and the default exchange. Dead-letter settings are read
// per key from queue arguments, falling back to the effective policy, which
// is how the broker resolves them. Without a dead-letter routing key the
// message keeps its original key; the collector assumes the keys of the
// source queue's own bindings (the default-exchange binding is the queue's
// name). A binding pattern used as a key is an approximation: a source bound
// with "orders.*" is assumed to receive the literal key "orders.*".
//
// Management statistics lag the broker by about five seconds, so the depth of
// every DLQ comes from a passive queue.declare over a long-lived AMQP
// connection (one per vhost, redialled on the next poll after the broker
// closes it): its ready count is exact, and the unacknowledged count is added
// from the management API. Without a management URL, or while the management
// API is down, the collector keeps measuring the DLQs it knows (explicitly
// listed queues and the DLQs of the last successful topology) over AMQP alone,
// and the snapshot is marked partial. An AMQP operation never outlives the
// poll's context: on cancellation its connection is closed under it.
//
// A poll never reads a message: no basic.get, no consumer, nothing returned
// or requeued, on any queue type. On a quorum queue every return of a read
// message counts as a delivery (x-delivery-count), RabbitMQ 4 drops or
// dead-letters a message after 20 of them by default, and a return moves
// the message behind the others; so the age of a DLQ's oldest message is
// exact only when the broker reports head_message_timestamp (a classic
// queue whose head message has a timestamp property), 0 for an empty DLQ,
// and otherwise estimated (queue.DLQ.OldestAgeBasis): from the head's
// x-death time as the last browse saw it (recorded on the shared
// brokers/rabbitmq.Cluster, and forgotten once the ready count falls below
// what the browse saw while no consumer holds messages), else from when
// polls first saw the current backlog (nextBacklog). The broker's version
// is read at the first poll (and every ten minutes) so that browsing knows
// RabbitMQ 4's default delivery limit.
//
// Without the management API a DLQ's depth is its exact ready count only;
// unacknowledged messages are not visible over AMQP.
//
// Wrong management credentials fail the poll with an error that says which
// setting to check; a vhost or DLQ that cannot be read is marked on the item
// and listed in Snapshot.Partial while the rest of the snapshot stays valid.
package rabbitmq
