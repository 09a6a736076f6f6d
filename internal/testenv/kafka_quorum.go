package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// KafkaQuorumEnv names the environment variable that lets the three-node
// cluster start: three JVMs cost a two-core machine about a minute of
// both cores and a gigabyte of memory, so the tests that need one run
// where it is set to 1 (make test-kafka-quorum), and skip elsewhere, in CI
// too.
const KafkaQuorumEnv = "QUEUEWATCH_KAFKA_QUORUM"

// KafkaQuorum is a cluster of three real Apache Kafka nodes of
// KafkaVersion, each a broker and a controller (KRaft combined mode), on
// loopback ports: the controller quorum survives one node's loss, and
// internal topics have three replicas, two of them in sync at least.
type KafkaQuorum struct {
	Nodes []*KafkaNode
	// StartupTime is how long the first start took, from launching the
	// JVMs until every node served; FormatTime how long formatting the
	// three storages took, side by side.
	StartupTime, FormatTime time.Duration
}

var quorum struct {
	once sync.Once
	q    *KafkaQuorum
	err  error
}

// RealKafkaQuorum returns the shared three-node cluster, starting it on
// first use. It skips under -short and unless KafkaQuorumEnv is 1; a
// cluster that cannot start goes to Require. KafkaMain stops it.
func RealKafkaQuorum(t testing.TB) *KafkaQuorum {
	t.Helper()
	Slow(t, "a three-node Kafka cluster")
	if os.Getenv(KafkaQuorumEnv) != "1" {
		t.Skipf("a three-node Kafka cluster runs with %s=1 (make test-kafka-quorum)", KafkaQuorumEnv)
	}
	quorum.once.Do(func() {
		quorum.q, quorum.err = startQuorum(KafkaVersion, 3)
	})
	Require(t, "a three-node Apache Kafka "+KafkaVersion+" cluster", quorum.err)
	return quorum.q
}

func startQuorum(version string, size int) (*KafkaQuorum, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return nil, err
	}
	jars, err := KafkaJarsAt(version)
	if err != nil {
		return nil, err
	}
	q := &KafkaQuorum{}
	var voters []string
	for id := 1; id <= size; id++ {
		dir, err := os.MkdirTemp("", "qw-kafka-quorum-")
		if err != nil {
			q.remove()
			return nil, err
		}
		n, err := newKafkaNode(version, jars, dir, id)
		if err != nil {
			_ = os.RemoveAll(dir)
			q.remove()
			return nil, err
		}
		q.Nodes = append(q.Nodes, n)
		voters = append(voters, n.voter())
	}
	id := clusterID()
	start := time.Now()
	errs := make([]error, size)
	var wg sync.WaitGroup
	for i, n := range q.Nodes {
		n.voters, n.replicas = strings.Join(voters, ","), size
		wg.Go(func() { errs[i] = n.format(id) })
	}
	wg.Wait()
	q.FormatTime = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		q.remove()
		return nil, err
	}
	start = time.Now()
	if err := q.Start(); err != nil {
		q.stop()
		q.remove()
		return nil, err
	}
	q.StartupTime = time.Since(start)
	return q, nil
}

// Addrs are the nodes' bootstrap addresses.
func (q *KafkaQuorum) Addrs() []string {
	var addrs []string
	for _, n := range q.Nodes {
		addrs = append(addrs, n.Addr())
	}
	return addrs
}

// Node is the node with a broker id, nil when there is none.
func (q *KafkaQuorum) Node(id int32) *KafkaNode {
	for _, n := range q.Nodes {
		if int32(n.id) == id {
			return n
		}
	}
	return nil
}

// Start starts every node that is not running and waits until they all
// serve. The nodes are launched together: none serves before a majority
// of the controllers runs.
func (q *KafkaQuorum) Start() error {
	start := time.Now()
	var launched []*KafkaNode
	for _, n := range q.Nodes {
		n.mu.Lock()
		if n.cmd == nil {
			if err := n.launchLocked(); err != nil {
				n.mu.Unlock()
				return err
			}
			launched = append(launched, n)
		}
		n.mu.Unlock()
	}
	errs := make([]error, len(launched))
	var wg sync.WaitGroup
	for i, n := range launched {
		wg.Go(func() {
			n.mu.Lock()
			defer n.mu.Unlock()
			if n.cmd != nil {
				errs[i] = n.waitLocked(start)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Kill kills every node with SIGKILL at once, as a power cut would.
func (q *KafkaQuorum) Kill() {
	for _, n := range q.Nodes {
		n.Kill()
	}
}

// RSS is the nodes' resident memory in bytes, added up.
func (q *KafkaQuorum) RSS() int64 {
	var sum int64
	for _, n := range q.Nodes {
		sum += n.RSS()
	}
	return sum
}

// ID is the node's broker (and controller) id.
func (n *KafkaNode) ID() int32 { return int32(n.id) }

func (q *KafkaQuorum) stop() {
	var wg sync.WaitGroup
	for _, n := range q.Nodes {
		wg.Go(n.Stop)
	}
	wg.Wait()
}

func (q *KafkaQuorum) remove() {
	for _, n := range q.Nodes {
		_ = os.RemoveAll(n.dir)
	}
}

// stopQuorum stops and removes the shared cluster, if one was started.
func stopQuorum() {
	if quorum.q != nil {
		quorum.q.stop()
		quorum.q.remove()
	}
}

// String names the quorum's nodes for logs.
func (q *KafkaQuorum) String() string {
	return fmt.Sprintf("kafka %s × %d at %s", q.Nodes[0].Version, len(q.Nodes), strings.Join(q.Addrs(), ","))
}
