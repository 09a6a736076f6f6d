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

// PubSubProject is the project tests create their topics and
// subscriptions in; the emulator accepts any.
const PubSubProject = "queuewatch-test"

// pubsubStartTimeout bounds one start of the emulator: about two seconds
// idle, a JVM on two busy shared cores takes longer.
const pubsubStartTimeout = 90 * time.Second

// PubSubEmulator is the official Pub/Sub emulator of the Google Cloud CLI
// (`gcloud beta emulators pubsub start` runs the same jar) on a loopback
// port, started once per test binary and shared: tests create uniquely
// named topics (Unique). REST and gRPC share the port.
type PubSubEmulator struct {
	// Host is host:port, the value of PUBSUB_EMULATOR_HOST.
	Host        string
	Project     string
	StartupTime time.Duration
	cmd         *exec.Cmd
	exited      chan struct{}
	log         bytes.Buffer
}

var pubsubEmu struct {
	once   sync.Once
	server *PubSubEmulator
	err    error
}

// PubSub returns this test package's emulator, starting it on first use; an
// emulator that cannot start (no Google Cloud CLI) goes to Require, so it
// fails under CI. The package's TestMain must call StopPubSub after m.Run.
func PubSub(t testing.TB) *PubSubEmulator {
	t.Helper()
	pubsubEmu.once.Do(func() {
		pubsubEmu.server, pubsubEmu.err = startPubSub()
	})
	Require(t, "the Pub/Sub emulator (Google Cloud CLI with the pubsub-emulator component)", pubsubEmu.err)
	return pubsubEmu.server
}

// StopPubSub stops the emulator PubSub started, if any.
func StopPubSub() {
	if s := pubsubEmu.server; s != nil {
		s.stop()
	}
}

// pubsubJar finds the emulator's jar in the Google Cloud CLI's install.
// Running the jar directly, not through gcloud, leaves one process to stop:
// gcloud starts the JVM as a child that outlives a killed gcloud.
func pubsubJar() (string, error) {
	roots := []string{os.Getenv("CLOUDSDK_ROOT_DIR"), "/usr/lib/google-cloud-sdk"}
	if gcloud, err := exec.LookPath("gcloud"); err == nil {
		if resolved, err := filepath.EvalSymlinks(gcloud); err == nil {
			roots = append(roots, filepath.Dir(filepath.Dir(resolved)))
		}
	}
	for _, root := range roots {
		if root == "" {
			continue
		}
		jars, _ := filepath.Glob(filepath.Join(root, "platform", "pubsub-emulator", "lib", "cloud-pubsub-emulator-*.jar"))
		if len(jars) > 0 {
			return jars[len(jars)-1], nil
		}
	}
	return "", errors.New("no platform/pubsub-emulator/lib/cloud-pubsub-emulator-*.jar in the Google Cloud CLI (gcloud components install pubsub-emulator)")
}

func startPubSub() (*PubSubEmulator, error) {
	jar, err := pubsubJar()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	s := &PubSubEmulator{Host: "127.0.0.1:" + strconv.Itoa(ports[0]), Project: PubSubProject, exited: make(chan struct{})}
	// The server outlives any one test's context: stop ends it.
	s.cmd = exec.CommandContext(context.Background(), "java", "-Xmx256m", "-jar", jar, "--host=127.0.0.1", "--port="+strconv.Itoa(ports[0]))
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the Pub/Sub emulator: %w", err)
	}
	// Wait's error is the exit status, expected to be a signal here.
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	if err := s.waitServing(); err != nil {
		s.stop()
		return nil, fmt.Errorf("Pub/Sub emulator on %s: %w; log tail: %s", s.Host, err, tail(s.log.String(), 2000))
	}
	s.StartupTime = time.Since(start)
	return s, nil
}

// waitServing waits for the REST surface to list the project's topics.
func (s *PubSubEmulator) waitServing() error {
	deadline := time.Now().Add(pubsubStartTimeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		err := s.ping(client)
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return errors.New("the emulator exited")
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not serving after %s: %w", pubsubStartTimeout, err)
		}
	}
}

func (s *PubSubEmulator) ping(client *http.Client) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://"+s.Host+"/v1/projects/"+s.Project+"/topics", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET topics: %s", resp.Status)
	}
	return nil
}

func (s *PubSubEmulator) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// Env is the environment for a real client (the Python
// google-cloud-pubsub library, gcloud) talking to the emulator.
func (s *PubSubEmulator) Env() []string {
	return append(os.Environ(), "PUBSUB_EMULATOR_HOST="+s.Host, "PUBSUB_PROJECT_ID="+s.Project)
}

// Python runs a Python program (the google-cloud-pubsub library, from
// PyPI) against the emulator and returns its output.
func (s *PubSubEmulator) Python(t testing.TB, program string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "python3", append([]string{"-c", program}, args...)...)
	cmd.Env = s.Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 against the Pub/Sub emulator: %v\n%s", err, strings.TrimSpace(string(out)))
	}
	return out
}
