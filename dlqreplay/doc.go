// Package dlqreplay browses dead-letter queues and runs jobs that replay,
// move, delete or restore their messages without ever losing one.
//
// A Service sits over one Backend per configured cluster
// (dlqreplay/rabbitmq, dlqreplay/kafka, dlqreplay/nats) and an audit store
// (package store). Everything that is the same on every broker lives
// here, once: request validation, the in-process lock (one job per DLQ),
// progress, cancellation, receipts, the audit log, the replay counters,
// and the job pipeline itself. For each message a job reads, the pipeline
// decides in one order — selection, poison check (max_replays), already
// sent by an earlier job, dry run, route and target check, rate limit,
// publish, settle, audit — and tells the broker's Session what to do: keep
// the message, publish a copy, or remove it after archiving. A restore
// publishes archived messages through Backend.Restore as a job of the
// same kind: the lock of the DLQ they were deleted from, the rate, the
// target check of a move, the counters, the audit and progress.
//
// A Backend is broker I/O only: browsing without changing anything,
// exclusivity across instances (a RabbitMQ exclusive consumer, a Kafka
// transactional ID and cursor lease, a NATS key-value lease), reading the snapshot, and removing a DLQ message only
// after its copy is confirmed (RabbitMQ publisher confirms without
// basic.return; Kafka a transaction that also commits the replay cursor).
// Every backend passes the same table of cases in dlqreplay/conformance.
//
// A backend whose broker can move a whole DLQ back itself (SQS message
// move tasks) also implements NativeRedriver: a request of mode ModeNative
// then runs as a job like the others — the in-process lock, the audit
// record, progress, cancel, the counters — but the broker moves the
// messages, so there is no selection, dry run, poison check, replay
// stamp or per-message receipt. The broker's own refusal of a second move
// is the lock across instances.
//
// Failure behaviour: a job that fails or is cancelled leaves every message
// it did not finish in the DLQ; its receipt lists each message's outcome,
// and marks possible duplicates where a fault left a copy in the target
// while the original may still be in the DLQ. A job still running when the
// process dies is reported as interrupted when the audit store is next
// opened, with the counts and outcomes flushed until then (every
// FlushInterval). What it had published but not settled may be in two
// places then, and its receipt can no longer say so: the pipeline records
// the DLQ ids of copies in the store before it publishes them (one write
// per batch) and settles what the broker confirmed at least twice per
// FlushInterval, and the next job on the DLQ over that store marks every
// message the dead job recorded and did not settle a possible duplicate
// (Store.InFlight). A crash thus gives at most duplicates, each named by
// that receipt; a message marked may also have been sent once only.
//
// Errors callers branch on are sentinels: ErrJobRunning (as a
// *ConflictError naming the running job), ErrUnknownDLQ, ErrInvalidRequest,
// ErrTargetMissing, ErrDeliveryLimit and ErrJobNotFound.
package dlqreplay
