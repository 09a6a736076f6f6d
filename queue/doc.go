// Package queue is queuewatch's broker-neutral vocabulary: the snapshot a
// collector produces for one cluster, consumer groups and their per-partition
// lag, queues, dead-letter queues and messages, plus the pure lag arithmetic.
//
// It imports only the standard library so that every other package (collectors,
// alerts, dlqreplay, web) can speak these types without depending on each other.
// Functions here do no I/O; they are table-tested with worked examples.
package queue
