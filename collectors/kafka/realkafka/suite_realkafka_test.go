package realkafka

import (
	"testing"

	"github.com/queuewatch/queuewatch/collectors/kafka/kafkatest"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// realCluster is a real node as a kafkatest.Cluster.
type realCluster struct{ node *testenv.KafkaNode }

func (c realCluster) Addrs() []string { return []string{c.node.Addr()} }
func (c realCluster) Brokers() int    { return 1 }
func (c realCluster) Emulated() bool  { return false }
func (c realCluster) Kill(*testing.T) { c.node.Kill() }

func (c realCluster) Restart(t *testing.T) {
	t.Helper()
	if err := c.node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("kafka %s restarted after SIGKILL in %s", c.node.Version, c.node.StartupTime)
}

// TestSuite runs the cases collectors/kafka runs on kfake
// (collectors/kafka/kafkatest) on the real node of each release, all the
// cases of a release sharing its node.
func TestSuite(t *testing.T) {
	t.Parallel()
	for _, v := range testenv.KafkaVersions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			kafkatest.Run(t, func(t *testing.T) kafkatest.Cluster { return realCluster{testenv.RealKafkaAt(t, v)} })
		})
	}
}

// TestBrokerKilledAndBack is kafkatest.RunKilledAndBack on the real node:
// SIGKILL, then a start on the same ports and logs. It stops the node the
// package shares, so it does not run in parallel: Go runs it before any
// parallel test resumes.
func TestBrokerKilledAndBack(t *testing.T) {
	kafkatest.RunKilledAndBack(t, realCluster{testenv.RealKafka(t)})
}
