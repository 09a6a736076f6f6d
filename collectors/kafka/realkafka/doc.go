// Package realkafka holds no code: its tests run queuewatch's Kafka
// collector, and the replay backend that shares its cluster access,
// against real Apache Kafka nodes (testenv.RealKafkaAt: 4.4.0 and 4.0.2,
// one node each) driven by real consumers, and check every number against
// what the broker's own kafka-consumer-groups tool reports. The cases
// collectors/kafka runs on kfake run here too, the same code
// (collectors/kafka/kafkatest), and with QUEUEWATCH_KAFKA_QUORUM=1 on a
// three-node cluster whose partition leader is killed. They
// live in their own package so that the node's start-up, which takes
// seconds, overlaps the other packages' tests instead of adding to
// collectors/kafka's.
package realkafka
