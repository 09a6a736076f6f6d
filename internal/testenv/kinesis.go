package testenv

import (
	"bytes"
	"context"
	"encoding/json"
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

// KinesisLocalVersion is the kinesis-local release kinesis-install.sh puts
// into .cache/kinesis-local-<version>.
const KinesisLocalVersion = "0.6.2"

// KinesisAccount and KinesisRegion are the account and region
// kinesis-local puts in every stream ARN (its defaults).
const (
	KinesisAccount = "000000000000"
	KinesisRegion  = "us-east-1"
)

// kinesisStartTimeout bounds one start of kinesis-local: about a second
// idle, longer on two busy shared cores.
const kinesisStartTimeout = 60 * time.Second

// KinesisServer is kinesis-local (kinesis-mock built for Node, from npm) on
// a loopback port, started once per test binary and shared: tests create
// uniquely named streams (Unique). It answers plain HTTP on Endpoint; its
// TLS port is bound to loopback too and not used.
type KinesisServer struct {
	// Endpoint is the server's base URL, http://127.0.0.1:PORT.
	Endpoint    string
	StartupTime time.Duration
	cmd         *exec.Cmd
	exited      chan struct{}
	log         bytes.Buffer
}

var kinesisLocal struct {
	once   sync.Once
	server *KinesisServer
	err    error
}

// Kinesis returns this test package's kinesis-local, starting it on first
// use; a server that cannot start (not installed: run
// internal/testenv/kinesis-install.sh) goes to Require, so it fails under
// CI. The package's TestMain must call StopKinesis after m.Run.
func Kinesis(t testing.TB) *KinesisServer {
	t.Helper()
	kinesisLocal.once.Do(func() {
		kinesisLocal.server, kinesisLocal.err = startKinesis()
	})
	Require(t, "kinesis-local (internal/testenv/kinesis-install.sh)", kinesisLocal.err)
	return kinesisLocal.server
}

// StopKinesis stops the server Kinesis started, if any.
func StopKinesis() {
	if s := kinesisLocal.server; s != nil {
		s.stop()
	}
}

func startKinesis() (*KinesisServer, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, err
	}
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, ".cache", "kinesis-local-"+KinesisLocalVersion)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		return nil, fmt.Errorf("kinesis-local not installed in %s (run internal/testenv/kinesis-install.sh): %w", dir, err)
	}
	pkg := filepath.Join(dir, "node_modules", "kinesis-local")
	shim := filepath.Join(root, "internal", "testenv", "testdata", "kinesis", "bind-loopback.js")
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	s := &KinesisServer{Endpoint: "http://127.0.0.1:" + strconv.Itoa(ports[0]), exited: make(chan struct{})}
	// The server outlives any one test's context: stop ends it. The shim
	// makes it listen on loopback only (it binds 0.0.0.0 by itself).
	s.cmd = exec.CommandContext(context.Background(), node, "-r", shim, filepath.Join(pkg, "main.js"))
	s.cmd.Env = append(os.Environ(),
		"KINESIS_MOCK_PLAIN_PORT="+strconv.Itoa(ports[0]),
		"KINESIS_MOCK_TLS_PORT="+strconv.Itoa(ports[1]),
		"KINESIS_MOCK_CERT_PATH="+filepath.Join(pkg, "server.json"),
		"AWS_REGION="+KinesisRegion, "AWS_ACCOUNT_ID="+KinesisAccount,
		// Streams become ACTIVE, consumers registered, reshards done at
		// once rather than after the half second AWS-like delay.
		"CREATE_STREAM_DURATION=0ms", "REGISTER_STREAM_CONSUMER_DURATION=0ms",
		"SPLIT_SHARD_DURATION=0ms", "MERGE_SHARDS_DURATION=0ms", "UPDATE_SHARD_COUNT_DURATION=0ms",
		"LOG_LEVEL=WARN")
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start kinesis-local: %w", err)
	}
	// Wait's error is the exit status, expected to be a signal here.
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	if err := s.waitServing(); err != nil {
		s.stop()
		return nil, fmt.Errorf("kinesis-local on %s: %w; log tail: %s", s.Endpoint, err, tail(s.log.String(), 2000))
	}
	s.StartupTime = time.Since(start)
	return s, nil
}

func (s *KinesisServer) waitServing() error {
	deadline := time.Now().Add(kinesisStartTimeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		err := pingKinesis(client, s.Endpoint)
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return errors.New("kinesis-local exited")
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not serving after %s: %w", kinesisStartTimeout, err)
		}
	}
}

// pingKinesis asks for ListStreams with the headers of a signed request;
// the server checks they are there, not the signature.
func pingKinesis(client *http.Client, endpoint string) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, endpoint+"/", bytes.NewBufferString("{}"))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "Kinesis_20131202.ListStreams")
	req.Header.Set("X-Amz-Date", time.Now().UTC().Format("20060102T150405Z"))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=x/20260101/"+KinesisRegion+"/kinesis/aws4_request, SignedHeaders=host, Signature=x")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("ListStreams answered %s", resp.Status)
	}
	return nil
}

func (s *KinesisServer) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// AWSEnv is the environment for a real AWS client (the aws CLI, boto3)
// talking to the server: dummy credentials, its region, no shared config.
func (s *KinesisServer) AWSEnv() []string {
	return append(os.Environ(),
		"AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x",
		"AWS_DEFAULT_REGION="+KinesisRegion, "AWS_REGION="+KinesisRegion,
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true")
}

// AWS runs the aws CLI against the server.
func (s *KinesisServer) AWS(t testing.TB, args ...string) []byte {
	t.Helper()
	return awsCLI(t, s.Endpoint, s.AWSEnv(), args...)
}

// StreamARN is the ARN the server gives the stream named name.
func (s *KinesisServer) StreamARN(name string) string {
	return "arn:aws:kinesis:" + KinesisRegion + ":" + KinesisAccount + ":stream/" + name
}

// Boto3 runs a Python program with boto3 (from PyPI) and returns its
// output; the program reads the Kinesis endpoint from KINESIS_ENDPOINT
// and a DynamoDB endpoint (moto's, for KCL lease tables) from
// DYNAMODB_ENDPOINT, with credentials and region from AWSEnv.
func (s *KinesisServer) Boto3(t testing.TB, dynamodb, program string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "python3", append([]string{"-c", program}, args...)...)
	cmd.Env = append(s.AWSEnv(), "KINESIS_ENDPOINT="+s.Endpoint, "DYNAMODB_ENDPOINT="+dynamodb)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 with boto3: %v\n%s", err, strings.TrimSpace(string(out)))
	}
	return out
}

// KCLLease is one lease item KCLLeases writes, in the KCL's layout.
type KCLLease struct {
	Key        string   `json:"key"`
	Owner      string   `json:"owner,omitempty"`
	Counter    int64    `json:"counter"`
	Checkpoint string   `json:"checkpoint,omitempty"`
	Switches   int64    `json:"switches,omitempty"`
	Parents    []string `json:"parents,omitempty"`
	Children   []string `json:"children,omitempty"`
	// Layout "2.x" writes one childShardId as KCL 2.x did; otherwise
	// childShardIds as 3.x.
	Layout string `json:"layout,omitempty"`
	Delete bool   `json:"delete,omitempty"`
}

// KCLLeases writes leases into the lease table on the DynamoDB server at
// dynamodb (created first when create is set) with boto3, item by item as
// the KCL lays them out (testdata/kinesis/kcl_leases.py), and KCL 3.x's
// worker metric items for workers.
func (s *KinesisServer) KCLLeases(t testing.TB, dynamodb, table string, create bool, leases []KCLLease, workers ...string) {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	req, err := json.Marshal(map[string]any{"table": table, "create": create, "leases": leases, "worker_metrics": workers})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "python3", filepath.Join(root, "internal", "testenv", "testdata", "kinesis", "kcl_leases.py"))
	cmd.Env = append(s.AWSEnv(), "DYNAMODB_ENDPOINT="+dynamodb)
	cmd.Stdin = bytes.NewReader(req)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kcl_leases.py: %v\n%s", err, strings.TrimSpace(string(out)))
	}
}
