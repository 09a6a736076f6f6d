package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// MotoAccount is the account id moto puts in every queue URL and ARN; its
// region is the one the client signs for (ElasticMQRegion here).
const MotoAccount = "123456789012"

// motoStartTimeout bounds one start of moto_server: about a second idle,
// Python imports on two busy shared cores take longer.
const motoStartTimeout = 60 * time.Second

// SQSServer is an SQS-compatible server that tests drive with real AWS
// clients: ElasticMQ, or moto as a second implementation of the same API,
// so a test run on both does not build on one server's quirks.
type SQSServer interface {
	// URL is the server's base URL, the SDK's BaseEndpoint.
	URL() string
	// AWSEnv is the environment for the aws CLI and boto3.
	AWSEnv() []string
	// AWS runs the aws CLI against the server.
	AWS(t testing.TB, args ...string) []byte
	QueueURL(name string) string
	QueueARN(name string) string
}

// MotoServer is a real moto_server (moto's standalone server, from PyPI:
// pip install 'moto[server]') on a loopback port, answering SQS in the
// region the client signs for. Like ElasticMQ it is started once per test
// binary and shared: tests create uniquely named queues (Unique).
type MotoServer struct {
	// Endpoint is the server's base URL, http://127.0.0.1:PORT.
	Endpoint    string
	StartupTime time.Duration
	cmd         *exec.Cmd
	exited      chan struct{}
	log         bytes.Buffer
}

var moto struct {
	once   sync.Once
	server *MotoServer
	err    error
}

// Moto returns this test package's moto server, starting it on first use;
// a server that cannot start (moto_server not installed) goes to Require,
// so it fails under CI. The package's TestMain must call StopMoto after
// m.Run.
func Moto(t testing.TB) *MotoServer {
	t.Helper()
	moto.once.Do(func() {
		moto.server, moto.err = startMoto()
	})
	Require(t, "moto_server (pip install 'moto[server]')", moto.err)
	return moto.server
}

// StopMoto stops the server Moto started, if any.
func StopMoto() {
	if s := moto.server; s != nil {
		s.stop()
	}
}

func startMoto() (*MotoServer, error) {
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	s := &MotoServer{Endpoint: "http://127.0.0.1:" + strconv.Itoa(ports[0]), exited: make(chan struct{})}
	// The server outlives any one test's context: stop ends it.
	s.cmd = exec.CommandContext(context.Background(), bin, "-H", "127.0.0.1", "-p", strconv.Itoa(ports[0]))
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start moto_server: %w", err)
	}
	// Wait's error is the exit status, expected to be a signal here.
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	if err := s.waitServing(); err != nil {
		s.stop()
		return nil, fmt.Errorf("moto_server on %s: %w; log tail: %s", s.Endpoint, err, tail(s.log.String(), 2000))
	}
	s.StartupTime = time.Since(start)
	return s, nil
}

func (s *MotoServer) waitServing() error {
	deadline := time.Now().Add(motoStartTimeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		err := pingSQS(client, s.Endpoint)
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return errors.New("moto_server exited")
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not serving after %s: %w", motoStartTimeout, err)
		}
	}
}

func (s *MotoServer) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// URL is Endpoint.
func (s *MotoServer) URL() string { return s.Endpoint }

// AWSEnv is the environment for a real AWS client talking to the server:
// dummy credentials (moto checks none), region ElasticMQRegion, and no
// shared config file that could point elsewhere.
func (s *MotoServer) AWSEnv() []string {
	return append(os.Environ(),
		"AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x",
		"AWS_DEFAULT_REGION="+ElasticMQRegion, "AWS_REGION="+ElasticMQRegion,
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true")
}

// AWS runs the aws CLI against the server, as ElasticMQServer.AWS does.
func (s *MotoServer) AWS(t testing.TB, args ...string) []byte {
	t.Helper()
	return awsCLI(t, s.Endpoint, s.AWSEnv(), args...)
}

// QueueURL is the URL the server gives the queue named name.
func (s *MotoServer) QueueURL(name string) string {
	return s.Endpoint + "/" + MotoAccount + "/" + name
}

// QueueARN is the ARN the server gives the queue named name.
func (s *MotoServer) QueueARN(name string) string {
	return "arn:aws:sqs:" + ElasticMQRegion + ":" + MotoAccount + ":" + name
}
