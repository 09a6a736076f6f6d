package app

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/queuewatch/queuewatch/config"
)

// TestCheckKafkaConnect runs check on a Kafka cluster with a Kafka Connect
// cluster, loaded from YAML with its token in a file: a worker that
// answers adds its connectors to the ok line; one that refuses the token
// fails check with Connect's status and message, and never the token.
func TestCheckKafkaConnect(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	const token = "c0nnect-t0ken"
	connect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error_code": 401, "message": "Unauthorized"}`))
			return
		}
		_, _ = w.Write([]byte(`{"s": {"status": {"type": "sink", "connector": {"state": "RUNNING"}, "tasks": [{"id": 0, "state": "FAILED", "trace": "boom\n\tat x"}]}}}`))
	}))
	defer connect.Close()
	dir := t.TempDir()
	for file, s := range map[string]string{"right": token, "wrong": "wr0ng-t0ken"} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(s+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		file string
		want string
	}{
		{"right", "ok   kafka:k: 0 groups, 0 queues, 0 DLQs, 1 connector in "},
		{"wrong", "FAIL kafka:k: connect main: list connectors: 401 Unauthorized: Unauthorized\n"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			yml := "data_dir: " + t.TempDir() + "\nkafka:\n  - name: k\n    brokers: [" + kc.ListenAddrs()[0] + "]\n" +
				"    connect:\n      - name: main\n        url: " + connect.URL + "\n        auth: {token_file: " + tc.file + "}\n"
			path := filepath.Join(dir, tc.file+".yml")
			if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err = Check(context.Background(), cfg, &out, nil)
			if (err == nil) != (tc.file == "right") {
				t.Errorf("check: %v\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), tc.want) || strings.Contains(out.String(), "t0ken") {
				t.Errorf("check wrote:\n%s\nwant it to contain %q", out.String(), tc.want)
			}
		})
	}
}
