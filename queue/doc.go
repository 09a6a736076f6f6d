// Package queue is queuewatch's broker-neutral vocabulary: the snapshot a
// collector produces for one cluster, consumer groups and their per-partition
// lag, queues, dead-letter queues and messages, plus the pure lag arithmetic.
//
// It also holds the words every other package must agree on, each in one
// place: the DLQ ID and the replay header names; the statuses a reader can
// have (package alerts judges them: queue holds the facts they are judged
// from and, once judged, the verdict), a reader's effective status
// (ConsumerGroup.EffectiveStatus) and the one severity order (Statuses,
// Status.Severity) that every sort, banner, "needs attention" list, metric
// and dashboard ranks by; and how durations and counts are written for
// people (HumanDuration, HumanCount, ExactCount), so that the UI, alert
// sentences and the CLI say "12.4k", "3m 20s" and "1d 2h" alike.
//
// It imports only the standard library so that every other package (collectors,
// alerts, dlqreplay, web) can speak these types without depending on each other.
// Functions here do no I/O; they are table-tested with worked examples.
package queue
