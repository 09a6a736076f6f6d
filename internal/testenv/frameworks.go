package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Framework is one program of testdata/frameworks built by
// internal/testenv/frameworks-install.sh: a Maven module whose jar and
// dependencies make one classpath.
type Framework struct {
	classpath string
}

// RealFramework returns the built module (spring-kafka, spring-amqp,
// kafka-connect, kafka-share, kafka-streams). A missing build or a missing Java goes to Require.
func RealFramework(t testing.TB, module string) *Framework {
	t.Helper()
	f, err := framework(module)
	Require(t, "the "+module+" framework program", err)
	return f
}

func framework(module string) (*Framework, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return nil, err
	}
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, ".cache", "frameworks")
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		return nil, fmt.Errorf("framework programs not built in %s (run internal/testenv/frameworks-install.sh): %w", dir, err)
	}
	lib := filepath.Join(dir, module, "lib")
	if _, err := os.Stat(lib); err != nil {
		return nil, fmt.Errorf("no module %s in %s: %w", module, dir, err)
	}
	cp := []string{filepath.Join(lib, "*")}
	if jar := filepath.Join(dir, module, module+"-0.jar"); fileExists(jar) {
		cp = append([]string{jar}, cp...)
	}
	return &Framework{classpath: strings.Join(cp, string(os.PathListSeparator))}, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Command is the JVM running class with args on the module's classpath,
// with a small heap and a quick start (the programs run for seconds).
func (f *Framework) Command(ctx context.Context, class string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "java", append([]string{
		"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-cp", f.classpath, class,
	}, args...)...)
}

// Run runs class to its end and returns its output; the error carries it
// too, since a framework says why it failed in its log.
func (f *Framework) Run(ctx context.Context, class string, args ...string) (string, error) {
	out, err := f.Command(ctx, class, args...).CombinedOutput()
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		return string(out), fmt.Errorf("%s %s: %w: %s", class, strings.Join(args, " "), err, tail(string(out), 4000))
	}
	return string(out), nil
}
