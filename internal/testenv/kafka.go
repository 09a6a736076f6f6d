package testenv

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// KafkaVersion is the Apache Kafka release the real-broker tests run, as
// pinned in testdata/kafka/pom.xml.
const KafkaVersion = "4.4.0"

// kafkaStartTimeout bounds one node start: the JVM, KRaft election and
// broker registration take seconds on an idle machine and tens of seconds
// on a busy two-core one.
const kafkaStartTimeout = 2 * time.Minute

// KafkaNode is a real Apache Kafka node in KRaft combined mode (broker and
// controller in one JVM) on loopback ports, with its data in a temporary
// directory. It is started once per test binary and shared: tests create
// uniquely named topics and groups.
type KafkaNode struct {
	jars, dir  string
	brokerPort int
	// securePort is the SASL_SSL listener, caFile the CA that signed its
	// certificate.
	securePort int
	caFile     string
	mu         sync.Mutex
	cmd        *exec.Cmd
	exited     chan struct{}
	// FormatTime is how long formatting the storage took (a JVM of its
	// own), StartupTime how long the last Start took until the node served.
	FormatTime, StartupTime time.Duration
}

var shared struct {
	once sync.Once
	node *KafkaNode
	err  error
}

// RealKafka returns the shared real Kafka node, starting it on first use.
// A node that cannot start (no Java, jars not installed, start failure)
// goes to Require. The package's TestMain must call KafkaMain so the node
// is stopped when the tests end.
func RealKafka(t testing.TB) *KafkaNode {
	t.Helper()
	shared.once.Do(func() {
		shared.node, shared.err = startKafka()
	})
	Require(t, "Apache Kafka "+KafkaVersion, shared.err)
	return shared.node
}

// KafkaMain runs the tests of a package that uses RealKafka and stops the
// node afterwards. Call it from TestMain.
func KafkaMain(m *testing.M) {
	code := m.Run()
	if shared.node != nil {
		shared.node.Stop()
		_ = os.RemoveAll(shared.node.dir)
	}
	os.Exit(code)
}

// KafkaJars is the folder holding the broker's and tools' jars, resolved
// by internal/testenv/kafka-install.sh; an error says how to fill it.
func KafkaJars() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".cache", "kafka-"+KafkaVersion)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		return "", fmt.Errorf("kafka jars not installed in %s (run internal/testenv/kafka-install.sh): %w", dir, err)
	}
	return dir, nil
}

// KafkaPython is the Python of the virtualenv holding confluent-kafka
// (librdkafka), installed by internal/testenv/kafka-install.sh, and the
// folder of the scripts that use it; an error says how to install it.
func KafkaPython() (python, scripts string, err error) {
	root, err := repoRoot()
	if err != nil {
		return "", "", err
	}
	venv := filepath.Join(root, ".cache", "confluent-kafka")
	if _, err := os.Stat(filepath.Join(venv, ".complete")); err != nil {
		return "", "", fmt.Errorf("confluent-kafka not installed in %s (run internal/testenv/kafka-install.sh): %w", venv, err)
	}
	return filepath.Join(venv, "bin", "python"), filepath.Join(root, "internal", "testenv", "testdata", "kafka"), nil
}

// repoRoot is the closest directory above the working directory (a test
// runs in its package's) that holds go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

func startKafka() (*KafkaNode, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return nil, err
	}
	jars, err := KafkaJars()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "qw-kafka-")
	if err != nil {
		return nil, err
	}
	n := &KafkaNode{jars: jars, dir: dir}
	if err := n.format(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := n.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return n, nil
}

// format writes server.properties on three free ports (plaintext,
// controller, SASL_SSL) and formats the node's KRaft storage with a new
// cluster id and the SCRAM user. Internal topics have one
// replica, and the broker's controller session is short so that a node
// restarted after a kill serves again within seconds instead of waiting
// out its previous session (9 s by default).
func (n *KafkaNode) format() error {
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	n.brokerPort, n.securePort = ports[0], ports[2]
	caFile, keystore, err := writeKafkaCerts(n.dir)
	if err != nil {
		return err
	}
	n.caFile = caFile
	props := fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:%[2]d
listeners=PLAINTEXT://127.0.0.1:%[1]d,CONTROLLER://127.0.0.1:%[2]d,SASL_SSL://127.0.0.1:%[4]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d,SASL_SSL://127.0.0.1:%[4]d
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL
log.dirs=%[3]s
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=3000
`, ports[0], ports[1], filepath.Join(n.dir, "data"), ports[2]) + saslSSLProps(keystore)
	if err := os.WriteFile(n.propsPath(), []byte(props), 0o600); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), kafkaStartTimeout)
	defer cancel()
	start := time.Now()
	defer func() { n.FormatTime = time.Since(start) }()
	if _, err := n.Java(ctx, "kafka.tools.StorageTool", "format",
		"-t", clusterID(), "-c", n.propsPath(),
		"--add-scram", fmt.Sprintf("SCRAM-SHA-512=[name=%s,password=%s]", KafkaSCRAMUser, KafkaSCRAMPassword)); err != nil {
		return fmt.Errorf("format kafka storage: %w", err)
	}
	return nil
}

// clusterID is a new cluster id: 16 random bytes in URL-safe base64, not
// starting with '-', which the storage tool would take for an option (as
// Kafka's own Uuid.randomUuid avoids).
func clusterID() string {
	for {
		b := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, rand.Uint64()), rand.Uint64())
		if id := base64.RawURLEncoding.EncodeToString(b); id[0] != '-' {
			return id
		}
	}
}

func (n *KafkaNode) propsPath() string { return filepath.Join(n.dir, "server.properties") }

// Addr is the node's bootstrap address.
func (n *KafkaNode) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.brokerPort)) }

// SecureAddr is the node's SASL_SSL listener: TLS with a certificate for
// 127.0.0.1 signed by CAFile, and SCRAM-SHA-512 with KafkaSCRAMUser.
func (n *KafkaNode) SecureAddr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.securePort))
}

// CAFile is the PEM file of the CA that signed the node's certificate.
func (n *KafkaNode) CAFile() string { return n.caFile }

// Start starts the node (again, after Stop: same ports and data) and waits
// until it answers a metadata request.
func (n *KafkaNode) Start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		return nil
	}
	log, err := os.OpenFile(filepath.Join(n.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	// The child has its own copy of the descriptor.
	defer func() { _ = log.Close() }()
	// The node outlives any one test's context: Stop and Kill end it.
	cmd := exec.CommandContext(context.Background(), "java", "-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-cp", filepath.Join(n.jars, "*"), "kafka.Kafka", n.propsPath())
	cmd.Stdout, cmd.Stderr = log, log
	// The node must not outlive a test binary killed by its timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start kafka: %w", err)
	}
	exited := make(chan struct{})
	// Wait's error is the exit status, expected to be a signal here.
	go func() { _ = cmd.Wait(); close(exited) }()
	n.cmd, n.exited = cmd, exited
	if err := n.waitServing(exited); err != nil {
		n.stopLocked()
		return fmt.Errorf("kafka on %s: %w; log tail: %s", n.Addr(), err, n.logTail())
	}
	n.StartupTime = time.Since(start)
	return nil
}

// waitServing polls until a metadata request lists the broker and the
// group coordinator answers. On a new cluster the first FindCoordinator
// creates __consumer_offsets and gets COORDINATOR_NOT_AVAILABLE until
// that topic has a leader, which clients surface as an error (kfake has a
// coordinator at once); tests must not depend on which of them runs first.
func (n *KafkaNode) waitServing(exited <-chan struct{}) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr()), kgo.RetryTimeout(time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(kafkaStartTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		bs, err := adm.ListBrokers(ctx)
		if err == nil && len(bs) == 1 {
			err = adm.FindGroupCoordinators(ctx, "qw-testenv-warmup").Error()
		}
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("the JVM exited")
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not serving after %s: %w", kafkaStartTimeout, err)
		}
	}
}

// Stop stops the node: SIGTERM for a clean shutdown, SIGKILL when that
// takes longer than 20 seconds.
func (n *KafkaNode) Stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.stopLocked()
}

func (n *KafkaNode) stopLocked() {
	if n.cmd == nil {
		return
	}
	// An error means the process is already gone, which exited reports.
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(20 * time.Second):
		_ = n.cmd.Process.Kill()
		<-n.exited
	}
	n.cmd, n.exited = nil, nil
}

// Kill kills the node with SIGKILL, as a crash would: its next Start
// recovers the logs.
func (n *KafkaNode) Kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Kill()
	<-n.exited
	n.cmd, n.exited = nil, nil
}

// RSS is the node's resident memory in bytes, 0 when it is not running.
func (n *KafkaNode) RSS() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", n.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func (n *KafkaNode) logTail() string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "server.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// Java runs a main class from the Kafka jars (a command line tool such as
// org.apache.kafka.tools.consumer.group.ConsumerGroupCommand) with a small
// heap and returns its standard output; the error carries its standard
// error.
func (n *KafkaNode) Java(ctx context.Context, class string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "java", append([]string{
		"-Xmx256m", "-XX:+UseSerialGC",
		"-XX:TieredStopAtLevel=1", "-cp", filepath.Join(n.jars, "*"), class,
	}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", class, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}
