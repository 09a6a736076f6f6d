package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"testing"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestReplayWhoWithoutUSER checks that the audit names the OS user when
// $USER is unset, as in cron jobs and containers, instead of "cli:".
func TestReplayWhoWithoutUSER(t *testing.T) {
	u, err := user.Current()
	if err == nil && u.Username == "" {
		err = errors.New("empty user name")
	}
	testenv.Require(t, "an OS user", err)
	vhost, _ := rabbitDLQ(t, 1)
	path := writeConfig(t, fmt.Sprintf(`data_dir: %s
rabbitmq:
  - name: main
    url: amqp://guest:guest@127.0.0.1:5672/
    management_url: http://127.0.0.1:15672
    vhosts: [%q]
`, t.TempDir(), vhost))
	t.Setenv("USER", "")
	if err := os.Unsetenv("USER"); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd("replay", "--config", path, "--dlq", "rabbitmq:main:"+vhost+":orders.dlq", "--dry-run")
	var r receiptSummary
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
		t.Fatalf("dry run: exit %d %v\nstdout %s\nstderr %s", code, err, out, errOut)
	}
	if want := "cli:" + u.Username; r.Job.Who != want {
		t.Errorf("who %q, want %q", r.Job.Who, want)
	}
}
