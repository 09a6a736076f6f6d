// Package realkafka holds no code: its tests run queuewatch's Kafka
// collector, and the replay backend that shares its cluster access,
// against a real Apache Kafka node (testenv.RealKafka) driven by real
// consumers, and check every number against what the broker's own
// kafka-consumer-groups tool reports. The cases collectors/kafka runs on
// kfake run here too, the same code (collectors/kafka/kafkatest). They
// live in their own package so that the node's start-up, which takes
// seconds, overlaps the other packages' tests instead of adding to
// collectors/kafka's.
package realkafka
