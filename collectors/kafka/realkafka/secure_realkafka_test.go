package realkafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	collector "github.com/queuewatch/queuewatch/collectors/kafka"
	"github.com/queuewatch/queuewatch/collectors/kafka/kafkatest"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// secureAccess is the cluster access app builds for the node's SASL_SSL
// listener from a config with a CA file and SCRAM-SHA-512 credentials.
func secureAccess(t *testing.T, node *testenv.KafkaNode, password string) *brokerkafka.Cluster {
	t.Helper()
	c, err := brokerkafka.New(config.Kafka{
		Name:    "secure",
		Brokers: []string{node.SecureAddr()},
		TLS:     config.TLS{Enabled: true, CAFile: node.CAFile()},
		SASL:    &config.SASL{Mechanism: "SCRAM-SHA-512", Username: testenv.KafkaSCRAMUser, Password: password},
	}, config.DLQ{KafkaCursorGroup: testenv.Unique("cursor")}, kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSCRAMOverTLS polls the real broker through its SASL_SSL listener
// (SCRAM-SHA-512 user created when the storage was formatted, certificate
// from a test CA): the lag is read, and a wrong password fails the poll
// with the broker's reason.
func TestSCRAMOverTLS(t *testing.T) {
	t.Parallel()
	b := realBroker(t)
	topic := b.topic(2)
	b.produce(topic, 2, 5)
	g := testenv.Unique("secure")
	b.commit(g, topic, map[int32]int64{0: 1, 1: 5})

	s, err := collector.New(collector.Options{
		Cluster:      secureAccess(t, b.node, testenv.KafkaSCRAMPassword),
		IncludeGroup: func(name string) bool { return name == g },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	snap := poll(t, s)
	if got := kafkatest.Group(t, snap, g); got.TotalLag() != 4 || len(got.Partitions) != 2 {
		t.Errorf("over SASL_SSL: lag %d partitions %d; want 4 over 2", got.TotalLag(), len(got.Partitions))
	}
	brokers, err := s.Check(context.Background())
	if err != nil || len(brokers) != 1 || brokers[0] != b.node.SecureAddr() {
		t.Errorf("check: %v %v; want the SASL_SSL listener %s advertised", brokers, err, b.node.SecureAddr())
	}

	wrong, err := collector.New(collector.Options{Cluster: secureAccess(t, b.node, "not-the-password")})
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := wrong.Poll(ctx); err == nil || !strings.Contains(err.Error(), "SASL_AUTHENTICATION_FAILED") {
		t.Errorf("wrong password: poll error %v; want SASL_AUTHENTICATION_FAILED", err)
	}
}
