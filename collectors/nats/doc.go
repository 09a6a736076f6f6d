// Package nats polls one NATS JetStream account's streams and consumers and
// turns them into a queue.Snapshot.
//
// Every request goes through the cluster's access layer (brokers/nats.Client,
// one connection kept between polls). One poll costs a number of requests
// that grows with streams, never with consumers × messages:
//
//  1. $JS.API.STREAM.LIST, paged (the server sends up to 256 stream infos a
//     page), filtered by the configured streams include/exclude regexes;
//  2. $JS.API.CONSUMER.LIST.<stream>, paged, once per watched stream that has
//     consumers: every consumer's info (num_pending, num_ack_pending,
//     num_waiting, delivered and ack floor sequences) comes in one answer;
//  3. $JS.API.STREAM.MSG.GET.<stream> with next_by_subj, only for a lagging
//     consumer whose next message's timestamp is not cached yet.
//
// Both listings are answered by the meta leader from each stream's and
// consumer's leader, so a replicated stream is reported once, as its leader
// sees it: no series per replica.
//
// Lag in seconds is the age of the next message the consumer has not been
// delivered: the first stream message after its delivered stream sequence
// that matches its filter subjects. Its (sequence, timestamp) is cached by
// (stream, filter, delivered sequence), so a consumer that does not move
// costs no request on the next poll; an entry whose message fell below the
// stream's first sequence (removed by limits) is read again.
//
// A consumer that cannot be read (a stream whose consumer listing fails, a
// lag lookup that fails) is marked with Err and listed in Snapshot.Partial;
// the rest of the snapshot stays valid. Only a failing connection or stream
// listing fails the poll.
//
// Status (ok, warn, stall, stop, error) is not decided here: alerts evaluates
// consumers over the poll window, like Kafka groups.
package nats
