// Package realkafka holds no code: its tests plan and apply offset resets
// (offsets/kafka) on real Apache Kafka nodes, 4.4 and 4.0
// (testenv.RealKafkaAt, one node per release, started once for the package
// and stopped by TestMain), and compare every plan's targets with what that
// release's own tool, kafka-consumer-groups --reset-offsets --dry-run,
// computes for the same spec on the same data. They live in their own
// package so the nodes' start-up overlaps other packages' tests instead of
// adding to offsets/kafka's kfake tests.
package realkafka
