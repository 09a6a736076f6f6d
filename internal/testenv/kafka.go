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
	"slices"
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
// pinned in testdata/kafka/pom.xml; KafkaPreviousVersion is the older
// line (the pom's kafka.previous.version) the core lag tests also run on.
const (
	KafkaVersion         = "4.4.0"
	KafkaPreviousVersion = "4.0.2"
)

// KafkaVersions are the releases with a node of their own, newest first.
var KafkaVersions = []string{KafkaVersion, KafkaPreviousVersion}

// kafkaStartTimeout bounds one node start: the JVM, KRaft election and
// broker registration take seconds on an idle machine and tens of seconds
// on a busy two-core one.
const kafkaStartTimeout = 2 * time.Minute

// KafkaNode is a real Apache Kafka node in KRaft combined mode (broker and
// controller in one JVM) on loopback ports, with its data in a temporary
// directory. It is started once per test binary and shared: tests create
// uniquely named topics and groups.
type KafkaNode struct {
	// Version is the Apache Kafka release the node runs.
	Version   string
	jars, dir string
	// id is the node id; voters the controller quorum (id@host:port,
	// comma separated) and replicas the replication factor of the
	// internal topics: the node alone, or every node of a KafkaQuorum.
	id, replicas   int
	voters         string
	controllerPort int
	brokerPort     int
	// securePort is the SASL_SSL listener, caFile the CA that signed its
	// certificate.
	securePort int
	caFile     string
	// oauthPort is the OAUTHBEARER listener whose tokens keycloak issues,
	// under KafkaMainWithOAuth; keycloakErr is why there is none.
	oauthPort   int
	keycloak    *Keycloak
	keycloakErr error
	mu          sync.Mutex
	cmd         *exec.Cmd
	exited      chan struct{}
	// FormatTime is how long formatting the storage took (a JVM of its
	// own), StartupTime how long the last Start took until the node served.
	FormatTime, StartupTime time.Duration
}

// sharedNode is one version's node, started once per test binary.
type sharedNode struct {
	once sync.Once
	node *KafkaNode
	err  error
}

var shared = map[string]*sharedNode{}

func init() {
	for _, v := range KafkaVersions {
		shared[v] = &sharedNode{}
	}
}

// RealKafka returns the shared real Kafka node of KafkaVersion, starting it
// on first use. A node that cannot start (no Java, jars not installed,
// start failure) goes to Require. The package's TestMain must call
// KafkaMain so the node is stopped when the tests end.
func RealKafka(t testing.TB) *KafkaNode {
	t.Helper()
	return RealKafkaAt(t, KafkaVersion)
}

// RealKafkaAt is RealKafka for one of KafkaVersions. Each version's node
// is started once, on first use, so a package pays only for the versions
// its tests ask for.
func RealKafkaAt(t testing.TB, version string) *KafkaNode {
	t.Helper()
	sn, ok := shared[version]
	if !ok {
		t.Fatalf("kafka %s is not one of %v", version, KafkaVersions)
	}
	sn.once.Do(func() {
		sn.node, sn.err = startKafka(version)
	})
	Require(t, "Apache Kafka "+version, sn.err)
	return sn.node
}

// KafkaMain runs the tests of a package that uses RealKafka and stops the
// nodes afterwards. Call it from TestMain.
func KafkaMain(m *testing.M) {
	code := m.Run()
	StopKafka()
	os.Exit(code)
}

// StopKafka stops the nodes RealKafka and the quorum helpers started, for
// a TestMain that has more than Kafka to stop.
func StopKafka() {
	for _, sn := range shared {
		if sn.node != nil {
			sn.node.Stop()
			sn.node.stopOAuth()
			_ = os.RemoveAll(sn.node.dir)
		}
	}
	stopQuorum()
}

// KafkaJars is the folder holding the broker's and tools' jars of
// KafkaVersion, resolved by internal/testenv/kafka-install.sh; an error
// says how to fill it.
func KafkaJars() (string, error) { return KafkaJarsAt(KafkaVersion) }

// KafkaJarsAt is KafkaJars for one of KafkaVersions.
func KafkaJarsAt(version string) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".cache", "kafka-"+version)
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

func startKafka(version string) (*KafkaNode, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return nil, err
	}
	jars, err := KafkaJarsAt(version)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "qw-kafka-")
	if err != nil {
		return nil, err
	}
	n, err := newKafkaNode(version, jars, dir, 1)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	n.voters, n.replicas = n.voter(), 1
	n.startOAuth()
	if err := n.format(clusterID()); err != nil {
		n.stopOAuth()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := n.Start(); err != nil {
		n.stopOAuth()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return n, nil
}

// newKafkaNode is node id of a release, in dir, on three free ports
// (plaintext, controller, SASL_SSL); the caller sets its quorum and
// formats it.
func newKafkaNode(version, jars, dir string, id int) (*KafkaNode, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	return &KafkaNode{
		Version: version, jars: jars, dir: dir, id: id,
		brokerPort: ports[0], controllerPort: ports[1], securePort: ports[2],
	}, nil
}

// voter is the node as a member of controller.quorum.voters.
func (n *KafkaNode) voter() string { return fmt.Sprintf("%d@127.0.0.1:%d", n.id, n.controllerPort) }

// format writes server.properties and formats the node's KRaft storage
// with the cluster id and the SCRAM user. Internal topics have a replica
// on every node of the quorum (at least two in sync when there are three),
// and the broker's controller session is short so that a node restarted
// after a kill serves again within seconds instead of waiting out its
// previous session (9 s by default), and a killed leader's partitions
// move within seconds.
func (n *KafkaNode) format(clusterID string) error {
	caFile, keystore, err := writeKafkaCerts(n.dir)
	if err != nil {
		return err
	}
	n.caFile = caFile
	oauthListener, oauthProtocol := n.oauthListener()
	props := fmt.Sprintf(`process.roles=broker,controller
node.id=%[5]d
controller.quorum.voters=%[6]s
listeners=PLAINTEXT://127.0.0.1:%[1]d,CONTROLLER://127.0.0.1:%[2]d,SASL_SSL://127.0.0.1:%[4]d%[9]s
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d,SASL_SSL://127.0.0.1:%[4]d%[9]s
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL%[10]s
log.dirs=%[3]s
num.partitions=1
offsets.topic.replication.factor=%[7]d
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=%[7]d
transaction.state.log.min.isr=%[8]d
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=%[7]d
share.coordinator.state.topic.min.isr=%[8]d
group.initial.rebalance.delay.ms=0
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=3000
`, n.brokerPort, n.controllerPort, filepath.Join(n.dir, "data"), n.securePort,
		n.id, n.voters, n.replicas, min(n.replicas, 2), oauthListener, oauthProtocol) + saslSSLProps(keystore) + n.oauthProps()
	if err := os.WriteFile(n.propsPath(), []byte(props), 0o600); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), kafkaStartTimeout)
	defer cancel()
	start := time.Now()
	defer func() { n.FormatTime = time.Since(start) }()
	if _, err := n.Java(ctx, "kafka.tools.StorageTool", "format",
		"-t", clusterID, "-c", n.propsPath(),
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
	start := time.Now()
	if err := n.launchLocked(); err != nil {
		return err
	}
	return n.waitLocked(start)
}

// launchLocked starts the node's JVM without waiting for it to serve: the
// nodes of a quorum serve only once a majority of them runs.
func (n *KafkaNode) launchLocked() error {
	log, err := os.OpenFile(filepath.Join(n.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	// The child has its own copy of the descriptor.
	defer func() { _ = log.Close() }()
	// The node outlives any one test's context: Stop and Kill end it.
	args := append([]string{"-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}, n.oauthJVMArgs()...)
	cmd := exec.CommandContext(context.Background(), "java", append(args,
		"-cp", filepath.Join(n.jars, "*"), "kafka.Kafka", n.propsPath())...)
	cmd.Stdout, cmd.Stderr = log, log
	// The node must not outlive a test binary killed by its timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start kafka: %w", err)
	}
	exited := make(chan struct{})
	// Wait's error is the exit status, expected to be a signal here.
	go func() { _ = cmd.Wait(); close(exited) }()
	n.cmd, n.exited = cmd, exited
	return nil
}

// waitLocked waits until the launched node serves, and stops it when it
// does not; start is when it was launched.
func (n *KafkaNode) waitLocked(start time.Time) error {
	if err := n.waitServing(n.exited); err != nil {
		n.stopLocked()
		return fmt.Errorf("kafka on %s: %w; log tail: %s", n.Addr(), err, n.logTail())
	}
	n.StartupTime = time.Since(start)
	return nil
}

// waitServing polls until a metadata request lists the node and the
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
		if err == nil && !slices.Contains(bs.NodeIDs(), int32(n.id)) {
			err = fmt.Errorf("node %d not among the brokers %v", n.id, bs.NodeIDs())
		}
		if err == nil {
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
