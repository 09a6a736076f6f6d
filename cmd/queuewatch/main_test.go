package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestVersionAndUsage(t *testing.T) {
	if code, out, _ := runCmd("version"); code != 0 || !strings.HasPrefix(out, "queuewatch ") {
		t.Errorf("version: %d %q", code, out)
	}
	if code, _, errOut := runCmd(); code != 2 || !strings.Contains(errOut, "Usage:") {
		t.Errorf("no args: %d", code)
	}
	if code, _, errOut := runCmd("frobnicate"); code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Errorf("unknown: %d %q", code, errOut)
	}
	if code, _, _ := runCmd("serve", "--no-such-flag"); code != 2 {
		t.Errorf("bad flag: %d", code)
	}
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "queuewatch.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckBadConfigNamesFileLineKey(t *testing.T) {
	path := writeConfig(t, "poll_interval: 15s\nkafka:\n  - name: prod\n    brokerz: [a:9092]\n")
	code, _, errOut := runCmd("check", "--config", path)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if want := path + ":4"; !strings.Contains(errOut, want) || !strings.Contains(errOut, "brokerz") {
		t.Errorf("error %q does not name %s and the key", errOut, want)
	}
	if lines := strings.Count(strings.TrimSpace(errOut), "\n"); lines > 1 {
		t.Errorf("error spans %d lines: %q", lines+1, errOut)
	}
}

// TestCheckReportsEveryMistake: three independent mistakes, two that
// decoding finds (an unknown key, a bad duration) and one that validation
// finds (a bad log level), are reported in one run, one line each, each
// naming its file, line and key, top to bottom.
func TestCheckReportsEveryMistake(t *testing.T) {
	path := writeConfig(t, "poll_interval: 15s\nkafka:\n  - name: prod\n    brokers: [a:9092]\n    isolaton: read_committed\n"+
		"alerts:\n  stale_after: soon\nlog:\n  level: loud\n")
	code, _, errOut := runCmd("check", "--config", path)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	want := []string{
		path + ":5: kafka[0].isolaton: unknown key (did you mean isolation?)",
		path + `:7: alerts.stale_after: invalid duration "soon"`,
		path + `:9: log.level: must be debug, info, warn or error, got "loud"`,
	}
	lines := strings.Split(strings.TrimSpace(strings.TrimPrefix(errOut, "queuewatch check: ")), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), errOut)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want it to start %q", i+1, lines[i], w)
		}
	}
}

func TestCheckUnreachableBrokerFails(t *testing.T) {
	path := writeConfig(t, "poll_timeout: 2s\nkafka:\n  - name: gone\n    brokers: [127.0.0.1:1]\n")
	code, out, errOut := runCmd("check", "--config", path)
	if code != 1 || !strings.Contains(out, "FAIL kafka:gone") || !strings.Contains(errOut, "kafka:gone") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
}

func TestServeWithoutSourcesFails(t *testing.T) {
	path := writeConfig(t, "listen: 127.0.0.1:0\n")
	if code, _, errOut := runCmd("serve", "--config", path); code != 1 || !strings.Contains(errOut, "no") {
		t.Errorf("serve without sources: %d %q", code, errOut)
	}
}

func TestRulesPrintsRuleFile(t *testing.T) {
	code, out, errOut := runCmd("rules")
	if code != 0 || !strings.Contains(out, "QueuewatchDLQNotEmpty") {
		t.Errorf("rules: %d %q", code, errOut)
	}
}

// TestRulesHonoursMetricsGranularity: at the group granularity the rule
// file queries the per-group total lag, the only lag series exported there.
func TestRulesHonoursMetricsGranularity(t *testing.T) {
	path := writeConfig(t, "metrics:\n  granularity: group\n")
	code, out, errOut := runCmd("rules", "--config", path)
	if code != 0 || !strings.Contains(out, "queuewatch_kafka_consumergroup_total_lag") || strings.Contains(out, "queuewatch_kafka_consumergroup_topic_lag") {
		t.Errorf("rules at group granularity: %d %q\n%s", code, errOut, out)
	}
}

func TestBrowsable(t *testing.T) {
	for in, want := range map[string]string{"0.0.0.0:8080": "127.0.0.1:8080", "[::]:80": "127.0.0.1:80", "[::1]:80": "[::1]:80", "10.1.2.3:9": "10.1.2.3:9"} {
		if got := browsable(in); got != want {
			t.Errorf("browsable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestServeRefusesNoAuthOnPublicAddress(t *testing.T) {
	path := writeConfig(t, "listen: 0.0.0.0:0\nkafka:\n  - name: prod\n    brokers: [127.0.0.1:1]\n")
	code, _, errOut := runCmd("serve", "--config", path)
	if code != 1 || !strings.Contains(errOut, "insecure-no-auth") {
		t.Errorf("serve with auth none on 0.0.0.0: %d %q", code, errOut)
	}
}
