package testenv

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ApicurioVersion is the Apicurio Registry release the schema registry
// tests run, as pinned in testdata/apicurio/pom.xml.
const ApicurioVersion = "2.6.13.Final"

// apicurioStartTimeout bounds one start: about 3.5 s on an idle machine,
// much more on two busy shared cores.
const apicurioStartTimeout = 90 * time.Second

// apicurioServer is a real Apicurio Registry (a Quarkus JVM, in-memory
// storage) on a loopback port.
type apicurioServer struct {
	url    string
	cmd    *exec.Cmd
	exited chan struct{}
	log    bytes.Buffer
}

var apicurio struct {
	once   sync.Once
	server *apicurioServer
	err    error
}

// SchemaRegistry returns the base URL of this test package's schema
// registry, a real Apicurio Registry's Confluent-compatible API
// (http://127.0.0.1:PORT/apis/ccompat/v7), starting it on first use. Its
// storage is in memory and shared by the package's tests, which use
// unique subjects (Unique). A registry that cannot start (no Java, not
// installed by internal/testenv/apicurio-install.sh) goes to Require. The
// package's TestMain must call StopSchemaRegistry after m.Run.
func SchemaRegistry(t testing.TB) string {
	t.Helper()
	apicurio.once.Do(func() {
		apicurio.server, apicurio.err = startApicurio()
	})
	Require(t, "Apicurio Registry "+ApicurioVersion, apicurio.err)
	return apicurio.server.url
}

// StopSchemaRegistry stops the registry SchemaRegistry started, if any.
func StopSchemaRegistry() {
	if s := apicurio.server; s != nil {
		s.stop()
	}
}

// ApicurioDir is the folder holding the registry's runner jar, unpacked by
// internal/testenv/apicurio-install.sh; an error says how to fill it.
func ApicurioDir() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".cache", "apicurio-"+ApicurioVersion)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		return "", fmt.Errorf("apicurio registry not installed in %s (run internal/testenv/apicurio-install.sh): %w", dir, err)
	}
	return dir, nil
}

func startApicurio() (*apicurioServer, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return nil, err
	}
	dir, err := ApicurioDir()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(ports[0])
	s := &apicurioServer{url: "http://127.0.0.1:" + port + "/apis/ccompat/v7", exited: make(chan struct{})}
	// The server outlives any one test's context: stop ends it. Storage
	// is in memory (H2), the 2.x default.
	s.cmd = exec.CommandContext(context.Background(), "java", "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port="+port,
		"-jar", filepath.Join(dir, "apicurio-registry-app-"+ApicurioVersion+"-runner.jar"))
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	// The server must not outlive a test binary killed by its timeout.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start apicurio registry: %w", err)
	}
	// Wait's error is the exit status, expected to be a signal here.
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	if err := s.waitServing(); err != nil {
		s.stop()
		return nil, fmt.Errorf("apicurio registry on port %s: %w; log tail: %s", port, err, tail(s.log.String(), 2000))
	}
	return s, nil
}

// waitServing polls until the registry lists its subjects.
func (s *apicurioServer) waitServing() error {
	return waitJVMServing(s.ping, s.exited, apicurioStartTimeout)
}

func (s *apicurioServer) ping(client *http.Client) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, s.url+"/subjects", http.NoBody)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /subjects answered %s", resp.Status)
	}
	return nil
}

func (s *apicurioServer) stop() {
	// An error means the process is already gone, which exited reports.
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}
