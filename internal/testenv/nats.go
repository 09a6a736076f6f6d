package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// NATSServerVersion and NATSCLIVersion are the releases nats-install.sh
// builds into .cache/bin for the process tests.
const (
	NATSServerVersion = "v2.15.3"
	NATSCLIVersion    = "v0.5.0"
)

// NATSEmbedded starts an in-process nats-server with JetStream on a
// temporary directory, on a free loopback port, and shuts it down when the
// test ends. It returns the server; ClientURL is its address.
func NATSEmbedded(t testing.TB) *server.Server {
	t.Helper()
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true,
	})
	if err != nil {
		t.Fatalf("embedded nats-server: %v", err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("embedded nats-server did not start in 10s")
	}
	return srv
}

// NATSServer is a real nats-server process with JetStream on a temporary
// directory.
type NATSServer struct {
	// URL is the client URL, nats://127.0.0.1:<port>.
	URL string
	cmd *exec.Cmd
}

// NATSProcess starts the nats-server binary that nats-install.sh built and
// stops it when the test ends. A missing binary or a failed start goes to
// Require: the test fails under CI=true and is skipped elsewhere.
func NATSProcess(t testing.TB) *NATSServer {
	t.Helper()
	bin, err := cachedBin("nats-server", NATSServerVersion)
	Require(t, "nats-server "+NATSServerVersion+" (internal/testenv/nats-install.sh)", err)
	ports := FreePorts(t, 1)
	dir := t.TempDir()
	// The process outlives this call: Cleanup kills it, not a context.
	cmd := exec.CommandContext(context.Background(), bin, "-a", "127.0.0.1", "-p", strconv.Itoa(ports[0]), "-js", "-sd", dir)
	if err := cmd.Start(); err != nil {
		Require(t, "nats-server "+NATSServerVersion, fmt.Errorf("start %s: %w", bin, err))
	}
	s := &NATSServer{URL: "nats://127.0.0.1:" + strconv.Itoa(ports[0]), cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	Require(t, "nats-server "+NATSServerVersion, waitTCP(ports[0], 20*time.Second))
	return s
}

// NATSCLI returns the path of the nats CLI that nats-install.sh built, or
// goes to Require when it is missing.
func NATSCLI(t testing.TB) string {
	t.Helper()
	bin, err := cachedBin("nats", NATSCLIVersion)
	Require(t, "nats CLI "+NATSCLIVersion+" (internal/testenv/nats-install.sh)", err)
	return bin
}

// cachedBin finds name-version in .cache/bin at the repository root.
func cachedBin(name, version string) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, ".cache", "bin", name+"-"+version)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s not installed: %w", p, err)
	}
	return p, nil
}

func waitTCP(port int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			return c.Close()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nothing listens on %s after %s: %w", addr, timeout, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
