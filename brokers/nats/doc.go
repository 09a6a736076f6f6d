// Package nats is the one way queuewatch reaches a NATS JetStream server or
// cluster.
//
// app builds one Cluster per configured nats section and hands the same value
// to that cluster's collector, to its dead-letter capture and to its replay
// backend, so all of them connect with the same URLs, credentials and TLS
// settings, and agree on the JetStream facts decided here once: the advisory
// subjects that mark a dead letter, the stream that keeps captured copies,
// how a DLQ is named and which names are known, and what objects are
// queuewatch's own. JetStream requests and listings are made here too:
// Client lists streams and consumers and looks up messages with raw API
// requests (the collector's poll), over the same connection as its
// nats.go JetStream context.
package nats
