package testenv

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/config"
)

// KafkaCluster is the access to a plaintext Kafka cluster (usually kfake)
// at brokers with the default cursor group, built as app builds it from
// config. extra go to every client after its own options.
func KafkaCluster(t testing.TB, name string, brokers []string, extra ...kgo.Opt) *brokerkafka.Cluster {
	t.Helper()
	c, err := brokerkafka.New(config.Kafka{Name: name, Brokers: brokers},
		config.DLQ{KafkaCursorGroup: config.DefaultKafkaCursorGroup}, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
