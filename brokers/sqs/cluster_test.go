package sqs

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopElasticMQ()
	testenv.StopMoto()
	os.Exit(code)
}

// local is the access to the test server with dummy credentials from the
// environment, as the default chain reads them.
func local(t *testing.T, s *testenv.ElasticMQServer, prefix string) *Cluster {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	c, err := New(config.SQS{Name: "local", Region: testenv.ElasticMQRegion, Endpoint: s.Endpoint, Queues: config.SQSQueues{Prefix: prefix}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSQSNewDoesNoIO builds the access to an endpoint nothing listens on and
// to a role that cannot be assumed: New succeeds, the first request fails.
func TestSQSNewDoesNoIO(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	c, err := New(config.SQS{
		Name: "gone", Region: "eu-west-1", Endpoint: "http://127.0.0.1:1",
		RoleARN: "arn:aws:iam::123456789012:role/none",
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := c.ListQueueURLs(ctx); err == nil {
		t.Fatal("listing queues on a closed port succeeded")
	}
}

// TestSQSListAndCount lists queues by prefix on a real ElasticMQ and counts
// every request per action, as AWS would bill them. (Neither ElasticMQ nor
// moto honours MaxResults: TestSQSListFollowsNextToken covers paging.)
func TestSQSListAndCount(t *testing.T) {
	s := testenv.ElasticMQ(t)
	prefix := testenv.Unique("list")
	var want []string
	for i := range 5 {
		name := prefix + "-" + strconv.Itoa(i)
		s.AWS(t, "sqs", "create-queue", "--queue-name", name)
		want = append(want, s.QueueURL(name))
	}
	s.AWS(t, "sqs", "create-queue", "--queue-name", testenv.Unique("other"))
	c := local(t, s, prefix)
	ctx := t.Context()
	got, err := c.ListQueueURLs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("ListQueueURLs = %q, want %q", got, want)
	}
	attrs, err := c.Attributes(ctx, want[0])
	if err != nil {
		t.Fatal(err)
	}
	if attrs["QueueArn"] != s.QueueARN(prefix+"-0") || attrs["ApproximateNumberOfMessages"] != "0" {
		t.Errorf("attributes = %v", attrs)
	}
	if _, err := c.Attributes(ctx, s.QueueURL(prefix+"-gone")); err == nil || !strings.Contains(err.Error(), prefix+"-gone") {
		t.Errorf("attributes of a missing queue: %v, want an error naming it", err)
	}
	if got := c.Requests(); got["ListQueues"] != 1 || got["GetQueueAttributes"] != 2 || len(got) != 2 {
		t.Errorf("requests = %v, want 1 ListQueues and 2 GetQueueAttributes", got)
	}
	if got := Actions(c.Requests()); !slices.Equal(got, []string{"GetQueueAttributes", "ListQueues"}) {
		t.Errorf("Actions = %q", got)
	}
}
