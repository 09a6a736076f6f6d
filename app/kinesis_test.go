package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// kinesisWorld is a stream with one record on kinesis-local and an
// application's lease table, checkpointed at that record, on moto.
func kinesisWorld(t *testing.T) (config.Kinesis, string) {
	t.Helper()
	k, m := testenv.Kinesis(t), testenv.Moto(t)
	for _, kv := range []string{"AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"} {
		key, v, _ := strings.Cut(kv, "=")
		t.Setenv(key, v)
	}
	stream, table := testenv.Unique("orders"), testenv.Unique("billing")
	k.AWS(t, "kinesis", "create-stream", "--stream-name", stream, "--shard-count", "1")
	k.AWS(t, "kinesis", "wait", "stream-exists", "--stream-name", stream)
	var put struct{ SequenceNumber string }
	if err := json.Unmarshal(k.AWS(t, "kinesis", "put-record", "--stream-name", stream, "--partition-key", "p", "--data", "eA=="), &put); err != nil {
		t.Fatal(err)
	}
	k.KCLLeases(t, m.Endpoint, table, true, []testenv.KCLLease{{Key: "shardId-000000000000", Owner: "worker-1", Counter: 3, Checkpoint: put.SequenceNumber}})
	return config.Kinesis{
		Name: "local", Region: testenv.KinesisRegion, Endpoint: k.Endpoint, DynamoDBEndpoint: m.Endpoint,
		Streams:      config.Filter{Include: []string{stream}},
		Applications: []config.KinesisApplication{{Name: "billing", LeaseTable: table, Stream: stream}},
	}, stream
}

// TestCheckKinesis checks a Kinesis account on kinesis-local and moto
// beside one nothing answers for: the good one's line says what a read
// takes of a shard's read budget, the other fails alone.
func TestCheckKinesis(t *testing.T) {
	acct, _ := kinesisWorld(t)
	cfg := testConfig(t)
	cfg.PollInterval = 15 * time.Second
	cfg.PollTimeout = 10 * time.Second
	cfg.History = time.Hour
	cfg.Kinesis = []config.Kinesis{acct, {Name: "gone", Region: "eu-west-1", Endpoint: "http://127.0.0.1:1", DynamoDBEndpoint: "http://127.0.0.1:1"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Check(context.Background(), cfg, &out, nil)
	if err == nil || !strings.Contains(err.Error(), "kinesis:gone") || strings.Contains(err.Error(), "kinesis:local") {
		t.Errorf("Check = %v, want only kinesis:gone to fail", err)
	}
	// One leased shard read once a minute: 1 / (5 × 60) of its GetRecords.
	for _, want := range []string{
		"ok   kinesis:local: 1 stream, 1 application; 1 shard read at checkpoints every 1m0s (GetShardIterator and GetRecords): 0.33% of a shard's 5 GetRecords a second",
		"FAIL kinesis:gone: kinesis gone: list streams: ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestKinesisServed serves a Kinesis account on kinesis-local and moto
// beside one nothing answers for: its application is in /metrics, the
// API, the overview and its page; the other account is down alone.
func TestKinesisServed(t *testing.T) {
	acct, _ := kinesisWorld(t)
	cfg := testConfig(t)
	cfg.Kinesis = []config.Kinesis{acct, {Name: "gone", Region: "eu-west-1", Endpoint: "http://127.0.0.1:1", DynamoDBEndpoint: "http://127.0.0.1:1"}}
	r := start(t, cfg)
	eventually(t, "the application read", func() bool {
		_, body := r.get(t, "/api/v1/kinesis/applications")
		return strings.Contains(body, `"application":"billing"`) && strings.Contains(body, `"workers":1`)
	})
	eventually(t, "the unreachable account's error", func() bool {
		_, body := r.get(t, "/api/v1/sources")
		return strings.Contains(body, "kinesis gone: list streams")
	})
	_, metrics := r.get(t, "/metrics")
	for _, want := range []string{
		`queuewatch_kinesis_application_status{application="billing",cluster="local",status="ok"} 1`,
		`queuewatch_kinesis_application_shards_behind{application="billing",cluster="local"} 0`,
		`queuewatch_collector_up{broker="kinesis",cluster="local"} 1`,
		`queuewatch_collector_up{broker="kinesis",cluster="gone"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, path := range []string{"/", "/?tab=kinesis", "/kinesis/local/applications/billing", "/api/v1/kinesis/applications/local/billing/history"} {
		if code, body := r.get(t, path); code != http.StatusOK {
			t.Errorf("GET %s: %d; body %.300q", path, code, body)
		}
	}
}
