// Package promtooltest runs Prometheus's promtool from Go tests, so that
// `go test ./...` checks rule files, rule unit tests and the Prometheus
// config with the real tool.
//
// promtool comes from Debian's prometheus package (2.42), the oldest
// Prometheus queuewatch supports. When it is missing, tests fail under CI
// (CI=true), where it must be installed, and are skipped elsewhere, so a
// laptop without Prometheus can still run the rest of the suite.
package promtooltest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"testing"
)

// Path returns the path of promtool; see the package doc for what happens
// when it is missing.
func Path(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("promtool is required under CI (apt-get install prometheus): %v", err)
	}
	t.Skipf("promtool not installed (apt-get install prometheus): %v", err)
	return ""
}

// Run runs promtool with args in dir and returns its combined output and
// whether it exited successfully. Failing to start it fails the test.
func Run(t testing.TB, dir string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), Path(t), args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run promtool %v: %v", args, err)
	}
	return out.String(), err == nil
}

// MustRun is Run that fails the test, showing promtool's output, when
// promtool exits non-zero.
func MustRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, ok := Run(t, dir, args...)
	if !ok {
		t.Fatalf("promtool %v failed:\n%s", args, out)
	}
	return out
}
