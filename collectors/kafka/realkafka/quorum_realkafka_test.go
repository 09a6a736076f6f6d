package realkafka

import (
	"testing"

	"github.com/queuewatch/queuewatch/collectors/kafka/kafkatest"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// quorumCluster is the three-node cluster as a kafkatest.Failover.
type quorumCluster struct{ q *testenv.KafkaQuorum }

func (c quorumCluster) Addrs() []string { return c.q.Addrs() }
func (c quorumCluster) Brokers() int    { return len(c.q.Nodes) }
func (c quorumCluster) Emulated() bool  { return false }
func (c quorumCluster) Kill(*testing.T) { c.q.Kill() }

func (c quorumCluster) Restart(t *testing.T) {
	t.Helper()
	if err := c.q.Start(); err != nil {
		t.Fatal(err)
	}
}

func (c quorumCluster) KillBroker(t *testing.T, id int32) {
	t.Helper()
	n := c.q.Node(id)
	if n == nil {
		t.Fatalf("no broker %d", id)
	}
	n.Kill()
}

func (c quorumCluster) RestartBroker(t *testing.T, id int32) {
	t.Helper()
	if err := c.q.Node(id).Start(); err != nil {
		t.Fatal(err)
	}
}

// TestQuorum runs the kafkatest cases on a three-node KRaft cluster (every
// topic with three replicas), then kills the leader of a watched
// partition, then the whole cluster. It needs testenv.KafkaQuorumEnv=1
// (make test-kafka-quorum): three more JVMs are too heavy for the default
// suite on two cores.
func TestQuorum(t *testing.T) {
	t.Parallel()
	q := testenv.RealKafkaQuorum(t)
	t.Logf("%s: storages formatted in %s, every node serving after %s, RSS %d MiB in all",
		q, q.FormatTime, q.StartupTime, q.RSS()>>20)
	c := quorumCluster{q}
	t.Run("suite", func(t *testing.T) {
		kafkatest.Run(t, func(*testing.T) kafkatest.Cluster { return c })
	})
	t.Run("leader killed", func(t *testing.T) { kafkatest.RunLeaderKilled(t, c) })
	t.Run("killed and back", func(t *testing.T) { kafkatest.RunKilledAndBack(t, c) })
}
