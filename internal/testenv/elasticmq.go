package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ElasticMQVersion is the ElasticMQ release the SQS tests run, as pinned
// in testdata/elasticmq/pom.xml.
const ElasticMQVersion = "1.7.1"

// ElasticMQRegion and ElasticMQAccount are the region and account id the
// server is started with: they appear in every queue ARN it hands out.
const (
	ElasticMQRegion  = "us-east-1"
	ElasticMQAccount = "000000000000"
)

// elasticMQStartTimeout bounds one start: about 2.5 s on an idle machine,
// much more on two busy shared cores.
const elasticMQStartTimeout = 60 * time.Second

// ElasticMQServer is a real ElasticMQ server (an SQS-compatible JVM) on a
// loopback port. It is started once per test binary and shared: tests
// create uniquely named queues (Unique).
type ElasticMQServer struct {
	// Endpoint is the server's base URL, http://127.0.0.1:PORT.
	Endpoint string
	// StartupTime is how long the start took until the server answered.
	StartupTime time.Duration
	cmd         *exec.Cmd
	exited      chan struct{}
	log         bytes.Buffer
}

var elasticMQ struct {
	once   sync.Once
	server *ElasticMQServer
	err    error
}

// ElasticMQ returns this test package's ElasticMQ server, starting it on
// first use; a server that cannot start (no Java, jars not installed by
// internal/testenv/elasticmq-install.sh) goes to Require. The package's
// TestMain must call StopElasticMQ after m.Run, since the server outlives
// the test that started it.
func ElasticMQ(t testing.TB) *ElasticMQServer {
	t.Helper()
	elasticMQ.once.Do(func() {
		elasticMQ.server, elasticMQ.err = startElasticMQ()
	})
	Require(t, "ElasticMQ "+ElasticMQVersion, elasticMQ.err)
	return elasticMQ.server
}

// StopElasticMQ stops the server ElasticMQ started, if any.
func StopElasticMQ() {
	if s := elasticMQ.server; s != nil {
		s.stop()
	}
}

// ElasticMQJars is the folder holding the server's jars, resolved by
// internal/testenv/elasticmq-install.sh; an error says how to fill it.
func ElasticMQJars() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".cache", "elasticmq-"+ElasticMQVersion)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		return "", fmt.Errorf("elasticmq jars not installed in %s (run internal/testenv/elasticmq-install.sh): %w", dir, err)
	}
	return dir, nil
}

// AWSEnv is the environment for a real AWS client (the aws CLI, boto3)
// talking to the server: dummy credentials (ElasticMQ checks none) and the
// server's region, and no shared config file that could point elsewhere.
func (s *ElasticMQServer) AWSEnv() []string {
	return append(os.Environ(),
		"AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x",
		"AWS_DEFAULT_REGION="+ElasticMQRegion, "AWS_REGION="+ElasticMQRegion,
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true")
}

func startElasticMQ() (*ElasticMQServer, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return nil, err
	}
	jars, err := ElasticMQJars()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(ports[0])
	s := &ElasticMQServer{Endpoint: "http://127.0.0.1:" + port, exited: make(chan struct{})}
	// The server outlives any one test's context: stop ends it. The
	// node address is what the queue URLs it hands out name (localhost
	// by default, which may resolve to ::1).
	s.cmd = exec.CommandContext(context.Background(), "java", "-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Drest-sqs.bind-hostname=127.0.0.1", "-Drest-sqs.bind-port="+port, "-Dnode-address.host=127.0.0.1", "-Dnode-address.port="+port,
		"-Daws.region="+ElasticMQRegion, "-Daws.accountId="+ElasticMQAccount,
		"-cp", filepath.Join(jars, "*"), "org.elasticmq.server.Main")
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	// The server must not outlive a test binary killed by its timeout.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start elasticmq: %w", err)
	}
	// Wait's error is the exit status, expected to be a signal here.
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	if err := s.waitServing(); err != nil {
		s.stop()
		return nil, fmt.Errorf("elasticmq on %s: %w; log tail: %s", s.Endpoint, err, tail(s.log.String(), 2000))
	}
	s.StartupTime = time.Since(start)
	return s, nil
}

// waitServing polls until the server answers an SQS request.
func (s *ElasticMQServer) waitServing() error {
	return waitJVMServing(s.ping, s.exited, elasticMQStartTimeout)
}

// waitJVMServing polls ping until it answers, the JVM exits or timeout
// passes: the start of every Java server the tests run.
func waitJVMServing(ping func(*http.Client) error, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		err := ping(client)
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("the JVM exited")
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not serving after %s: %w", timeout, err)
		}
	}
}

// ping sends ListQueues in the JSON protocol the Go SDK and boto3 speak.
func (s *ElasticMQServer) ping(client *http.Client) error { return pingSQS(client, s.Endpoint) }

// pingSQS sends ListQueues to the SQS server at endpoint.
func pingSQS(client *http.Client, endpoint string) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, endpoint+"/", bytes.NewBufferString("{}"))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.ListQueues")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("ListQueues answered %s", resp.Status)
	}
	return nil
}

func (s *ElasticMQServer) stop() {
	// An error means the process is already gone, which exited reports.
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// AWS runs the aws CLI (from PyPI: a real client no one here wrote)
// against the server, as `aws --endpoint-url ENDPOINT --output json ARGS`,
// and returns its standard output; a failure fails the test. A missing CLI
// goes to Require.
func (s *ElasticMQServer) AWS(t testing.TB, args ...string) []byte {
	t.Helper()
	return awsCLI(t, s.Endpoint, s.AWSEnv(), args...)
}

// awsCLI runs `aws --endpoint-url endpoint --output json args` with env.
func awsCLI(t testing.TB, endpoint string, env []string, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath("aws"); err != nil {
		Require(t, "the aws CLI", err)
	}
	cmd := exec.CommandContext(t.Context(), "aws", append([]string{"--endpoint-url", endpoint, "--output", "json"}, args...)...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("aws %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// URL is Endpoint.
func (s *ElasticMQServer) URL() string { return s.Endpoint }

// QueueURL is the URL the server gives the queue named name.
func (s *ElasticMQServer) QueueURL(name string) string {
	return s.Endpoint + "/" + ElasticMQAccount + "/" + name
}

// QueueARN is the ARN the server gives the queue named name.
func (s *ElasticMQServer) QueueARN(name string) string {
	return "arn:aws:sqs:" + ElasticMQRegion + ":" + ElasticMQAccount + ":" + name
}
