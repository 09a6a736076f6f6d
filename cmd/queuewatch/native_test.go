package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestReplayCommandNative: `queuewatch replay --native` has SQS move an
// ElasticMQ DLQ back to its source with its own move task and prints the
// receipt of a native job; with a selection it is refused, saying why.
func TestReplayCommandNative(t *testing.T) {
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x",
		"AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
	s := testenv.ElasticMQ(t)
	prefix := testenv.Unique("cli")
	dlq, src := prefix+"-dlq", prefix+"-src"
	s.AWS(t, "sqs", "create-queue", "--queue-name", dlq)
	s.AWS(t, "sqs", "create-queue", "--queue-name", src, "--attributes",
		`{"RedrivePolicy":"{\"deadLetterTargetArn\":\"`+s.QueueARN(dlq)+`\",\"maxReceiveCount\":\"1\"}"}`)
	// Dead letters made the way a failing consumer makes them (boto3).
	cmd := exec.CommandContext(t.Context(), "python3", "../../dlqreplay/sqs/testdata/dead_letter.py", s.Endpoint, s.QueueURL(src), s.QueueURL(dlq))
	cmd.Env = s.AWSEnv()
	cmd.Stdin = strings.NewReader(`[{"body":"a","attributes":{}},{"body":"b","attributes":{}},{"body":"c","attributes":{}}]`)
	if out, err := cmd.CombinedOutput(); err != nil {
		testenv.Require(t, "boto3", exec.Command("python3", "-c", "import boto3").Run())
		t.Fatalf("dead_letter.py: %v: %s", err, out)
	}
	path := writeConfig(t, fmt.Sprintf(`data_dir: %s
sqs:
  - name: local
    region: %s
    endpoint: %s
    queues: {prefix: %s}
`, t.TempDir(), testenv.ElasticMQRegion, s.Endpoint, prefix))
	id := "sqs:local::" + dlq

	code, _, errOut := runCmd("replay", "--config", path, "--dlq", id, "--native", "--limit", "1")
	if code != 1 || !strings.Contains(errOut, "every message") {
		t.Errorf("--native --limit 1: exit %d %q", code, errOut)
	}
	code, out, errOut := runCmd("replay", "--config", path, "--dlq", id, "--native", "--rate", "-1")
	var done receiptSummary
	if err := json.Unmarshal([]byte(out), &done); code != 0 || err != nil {
		t.Fatalf("native replay: exit %d %v\nstdout %s\nstderr %s", code, err, out, errOut)
	}
	if done.Job.Mode != dlqreplay.ModeNative || done.Job.State != dlqreplay.StateSucceeded || done.Job.Progress.Moved != 3 || done.Job.Target.Name != src {
		t.Fatalf("receipt %+v", done.Job)
	}
	attrs := string(s.AWS(t, "sqs", "get-queue-attributes", "--queue-url", s.QueueURL(src), "--attribute-names", "ApproximateNumberOfMessages"))
	if !strings.Contains(attrs, `"ApproximateNumberOfMessages": "3"`) {
		t.Fatalf("source after the native replay: %s", attrs)
	}
}
