// Package pubsub is the one way queuewatch reaches Google Cloud Pub/Sub
// (or its emulator).
//
// app builds one Cluster per configured pubsub section and hands the same
// value to that project's collector and, later, its replay backend, so all
// of them use the same project, endpoint and credentials. New does no I/O:
// the gRPC client (cloud.google.com/go/pubsub/v2) is made on first use, so
// a project whose credentials cannot be found is that project's error on
// every poll, not the process's.
//
// The Pub/Sub facts are decided here once:
//
//   - the topology (Topology): topics and subscriptions with their
//     delivery type (pull, push, BigQuery, Cloud Storage), dead-letter and
//     retry policies, ack deadline, retention, filter, exactly-once,
//     ordering, state and detachment;
//   - where dead letters go (DLQs): a subscription's
//     deadLetterPolicy.deadLetterTopic names a topic, and each
//     subscription attached to that topic is a DLQ of the source
//     subscription, named by its short id in the cluster's project (the
//     contract the replay backend shares);
//   - the configuration traps that lose dead letters silently (Lints);
//   - what Cloud Monitoring says of a subscription's backlog and age
//     (Monitoring), the only place Pub/Sub publishes them;
//   - how a DLQ subscription is counted without Monitoring (Count): pull
//     and give every message back at once, a lower bound.
package pubsub
