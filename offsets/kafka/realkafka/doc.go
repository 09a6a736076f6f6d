// Package realkafka holds no code: its tests plan and apply offset resets
// (offsets/kafka) on a real Apache Kafka node (testenv.RealKafka, started
// once for the package and stopped by TestMain) and compare every plan's
// targets with what the broker's own tool, kafka-consumer-groups
// --reset-offsets --dry-run, computes for the same spec on the same data.
// They live in their own package so the node's start-up overlaps other
// packages' tests instead of adding to offsets/kafka's kfake tests.
package realkafka
