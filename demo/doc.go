// Package demo runs an embedded three-broker Kafka cluster (franz-go kfake)
// with simulated services, so that `queuewatch demo` shows live consumer lag,
// lag seconds, every group status and filling dead-letter topics without any
// external infrastructure.
//
// Start creates the topics, pre-seeds an hour of history (a backlog with
// record timestamps spread over the last hour and 20 dead letters in each DLQ
// topic), then starts one goroutine per simulated service, each with its own
// kgo client. Close cancels them all, waits for every goroutine to return and
// only then closes the cluster, so no client is left talking to a dead broker.
//
// The simulated services and what each one demonstrates:
//
//   - producer: steady JSON traffic to orders, payments, events and
//     inventory. Each topic's rate follows its own slow sine wave so lag and
//     lag seconds move instead of sitting flat. About 2% of orders and
//     payments are poison records (malformed JSON or an impossible value)
//     which the consumers below genuinely fail to process.
//   - orders-processor: a healthy classic group on orders that keeps up and
//     commits regularly (status ok). It is also the failing consumer: records
//     it cannot parse or validate go to orders.DLT with Spring Kafka's
//     DeadLetterPublishingRecoverer headers (kafka_dlt-original-topic,
//     -partition as a 4-byte big-endian int32, -offset and -timestamp as
//     8-byte big-endian int64, -exception-fqcn, -message, -stacktrace), with
//     the original key and value.
//   - payments-sink: a Kafka Connect-like sink group on payments; records
//     its value converter rejects go to payments.DLQ with Connect's
//     __connect.errors.* headers (topic, partition and offset as decimal
//     strings, connector name, task id, stage, executing class, exception
//     class, message and stack trace).
//   - analytics-slow: consumes events at a fixed rate below the produce
//     rate and commits its progress, so lag grows steadily (status warn).
//   - billing-stopped: read about half of the inventory backlog, committed
//     and left the group: an Empty group whose lag grows (status stop).
//   - inventory-stalled: a member that stays in the group (it heartbeats)
//     but never commits after its first commit: committed offset frozen,
//     members > 0, lag > 0 (status stall).
//   - shipping-848: a healthy KIP-848 group on orders. kgo only speaks the
//     next-gen protocol with kgo.ServerSideBalancer (kgo.GroupProtocol only
//     names the classic protocol type), so that is what it uses; classic
//     DescribeGroups shows it with 0 members, ConsumerGroupDescribe shows
//     the real ones.
//   - ledger-writer: a transactional producer on ledger that commits most
//     transactions, aborts about 10% and periodically holds one open for a
//     while, so the last stable offset lags the high watermark.
//   - ledger-reader: a read_committed group on ledger that keeps up; its lag
//     is only honest when measured against the last stable offset.
//
// The group queuewatch-dlq is deliberately never created here: it is
// queuewatch's own cursor group for Kafka DLQ replay.
//
// Options.Speed scales every interval, rate period and hold time (but not
// Kafka protocol timeouts), so tests can see minutes of behaviour in
// seconds. Produce volume scales with it too: at Speed 1 the demo produces
// about 100 records per second.
//
// Besides Kafka, StartNATS runs an embedded JetStream server, StartRabbitMQ
// declares demo queues on a RabbitMQ that answers, and StartSQS creates two
// queue pairs on an SQS server that answers (ElasticMQ: `make elasticmq`):
// demo-orders and the FIFO demo-payments.fifo, each with a DLQ named by
// its RedrivePolicy (maxReceiveCount 3). Their consumers fail poison
// messages (about 2%) by never deleting them, so SQS itself moves them to
// the DLQ after the third receive, as AWS does.
//
// Failure behaviour: a service that hits a Kafka error logs it and keeps
// going; only context cancellation (Close or the Start context) stops it.
package demo
