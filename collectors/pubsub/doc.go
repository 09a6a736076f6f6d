// Package pubsub polls one Google Cloud Pub/Sub project (or the emulator)
// through its brokers/pubsub access.
//
// A read lists the project's topics and subscriptions (two paged admin
// calls whatever their number), keeps the subscriptions the include and
// exclude patterns select as readers, and finds the traps in their
// configuration (brokers/pubsub.Lints). DLQs come from that topology
// alone: each subscription attached to a topic that another
// subscription's deadLetterPolicy names is a DLQ of that source, named by
// its id. A DLQ once found stays listed, at 0 when its subscription is
// gone, so its series drops to 0 instead of vanishing.
//
// Pub/Sub's admin API tells no backlog. With monitoring.enabled, Cloud
// Monitoring's figures (one timeSeries.list call per metric per read)
// give every subscription's backlog and oldest age, and each DLQ's depth;
// they trail the present by minutes. Without it the backlog is unknown
// and a DLQ's depth is what a count saw (brokers/pubsub.Cluster.Count:
// pull and give every message back at once), marked as a lower bound.
//
// The project is read every pubsub[].poll_interval; polls in between
// serve the last read. No status is judged here (alerts evaluation does).
package pubsub
