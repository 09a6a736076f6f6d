package kafka_test

import (
	"net"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/queuewatch/queuewatch/collectors/kafka/kafkatest"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// kfakeCluster is an in-process three-broker kfake cluster on fixed ports,
// keeping its data in a directory so that it can be killed and restarted.
type kfakeCluster struct {
	ports []int
	dir   string
	c     *kfake.Cluster
}

func newKfake(t *testing.T) *kfakeCluster {
	t.Helper()
	k := &kfakeCluster{ports: testenv.FreePorts(t, 3), dir: t.TempDir()}
	k.Restart(t)
	t.Cleanup(func() { k.Kill(t) })
	return k
}

func (k *kfakeCluster) Addrs() []string {
	var addrs []string
	for _, p := range k.ports {
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	}
	return addrs
}

func (k *kfakeCluster) Brokers() int { return len(k.ports) }

func (k *kfakeCluster) Emulated() bool { return true }

func (k *kfakeCluster) Kill(*testing.T) {
	if k.c != nil {
		k.c.Close()
		k.c = nil
	}
}

func (k *kfakeCluster) Restart(t *testing.T) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.Ports(k.ports...), kfake.DataDir(k.dir))
	if err != nil {
		t.Fatal(err)
	}
	k.c = c
}

// TestSuite runs the cases every Kafka passes (collectors/kafka/kafkatest)
// on kfake, a new cluster for each. realkafka runs the same cases on real
// Apache Kafka nodes. The fault-injection tests (slow coordinator,
// authorization failure, one broker down, a truncated fetch answer) need
// kfake's control hooks and stay kfake-only, in kafka_test.go.
func TestSuite(t *testing.T) {
	kafkatest.Run(t, func(t *testing.T) kafkatest.Cluster { return newKfake(t) })
}

// TestClusterDownAndBack is kafkatest.RunKilledAndBack on kfake: the
// cluster closed and a new one started on the same ports and data.
func TestClusterDownAndBack(t *testing.T) {
	kafkatest.RunKilledAndBack(t, newKfake(t))
}
