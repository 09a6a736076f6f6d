// Package frameworks holds no code: its tests make dead letters with the
// frameworks services really use — Spring Kafka's
// DeadLetterPublishingRecoverer and Kafka Connect's dead letter queue on a
// real Apache Kafka node, Spring AMQP's RepublishMessageRecoverer on the
// real RabbitMQ — and check that queuewatch, started as `serve` runs it,
// detects each DLQ, attributes it to its source and decodes every failure
// header the framework wrote, through the API and the DLQ page. The
// programs are built from internal/testenv/testdata/frameworks by
// internal/testenv/frameworks-install.sh.
package frameworks
