package testenv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"
)

// Require fails the test when err is not nil and CI=true, and skips it
// when err is not nil elsewhere. what names the missing service.
func Require(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required in CI: %v", what, err)
	}
	t.Skipf("no %s (set CI=true to fail instead): %v", what, err)
}

// FreePorts returns n TCP ports on 127.0.0.1 that were free a moment ago,
// for servers (kfake, Prometheus) that must be restarted on the same
// port or told their address up front.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports, err := freePorts(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// Unique returns a name starting with "qw-"+prefix that no earlier run
// used, so tests sharing one broker never see each other's objects.
func Unique(prefix string) string {
	return fmt.Sprintf("qw-%s-%d-%04d", prefix, time.Now().UnixNano()%1e9, rand.IntN(10000))
}

// Slow skips a test under `go test -short` (make test-short): a browser, a
// second broker node or a long fault run costs seconds to tens of seconds,
// and the inner loop wants the rest. make test and CI never pass -short.
func Slow(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: skipping %s", what)
	}
}

// freePorts is FreePorts for code that runs outside one test. Every
// listener stays open until all n ports are chosen, so the n ports differ.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
