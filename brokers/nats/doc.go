// Package nats is the one way queuewatch reaches a NATS JetStream server or
// cluster.
//
// app builds one Cluster per configured nats section and hands the same value
// to that cluster's collector, to its dead-letter capture and to its replay
// backend, so all of them connect with the same URLs, credentials and TLS
// settings, and agree on the JetStream facts decided here once: the advisory
// subjects that mark a dead letter and the stream that keeps captured copies.
package nats
