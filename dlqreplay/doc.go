// Package dlqreplay browses dead-letter queues and runs jobs that replay,
// move or delete their messages without ever losing one.
//
// A Service sits over one Backend per configured cluster
// (dlqreplay/rabbitmq, dlqreplay/kafka) and an audit store
// (dlqreplay/audit). The Service owns what is broker-neutral: request
// validation, the in-process lock (one job per DLQ), rate limiting,
// progress, cancellation, receipts, the audit log and the replay counters.
// Backends own what must hold at the broker: browsing without changing
// anything, exclusivity across instances (a RabbitMQ exclusive consumer, a
// Kafka transactional ID), and acknowledging a DLQ message only after its
// copy is confirmed (RabbitMQ publisher confirms without basic.return;
// Kafka a transaction that also commits the replay cursor).
//
// Failure behaviour: a job that fails or is cancelled leaves every message
// it did not finish in the DLQ; its receipt lists each message's outcome,
// and marks possible duplicates where a fault left a copy in the target
// while the original may still be in the DLQ. A job still running when the
// process dies is reported as interrupted when the audit store is next
// opened, with the counts and outcomes flushed until then (every
// FlushInterval).
//
// Errors callers branch on are sentinels: ErrJobRunning (as a
// *ConflictError naming the running job), ErrUnknownDLQ, ErrInvalidRequest,
// ErrTargetMissing, ErrDeliveryLimit and ErrJobNotFound.
package dlqreplay
