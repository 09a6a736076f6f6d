package sqs

import (
	"strconv"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestSQSCloudWatchOldestAges seeds ApproximateAgeOfOldestMessage
// datapoints with the aws CLI in moto's CloudWatch and reads them back:
// each queue's latest datapoint of the last five minutes, none for a
// queue without one or with only an older one, one GetMetricData call per
// 500 queues, counted. Without cloudwatch.oldest_age nothing is asked.
func TestSQSCloudWatchOldestAges(t *testing.T) {
	m := testenv.Moto(t)
	p := testenv.Unique("cw")
	now := time.Now().UTC().Truncate(time.Second)
	put := func(queue string, value int, at time.Time) {
		m.AWS(t, "cloudwatch", "put-metric-data", "--namespace", "AWS/SQS", "--metric-name", "ApproximateAgeOfOldestMessage",
			"--dimensions", "QueueName="+queue, "--value", strconv.Itoa(value), "--unit", "Seconds", "--timestamp", at.Format(time.RFC3339))
	}
	put(p+"-orders", 42, now.Add(-2*time.Minute))
	put(p+"-orders", 90, now.Add(-time.Minute))
	put(p+"-stale", 7, now.Add(-10*time.Minute))
	put(p+"-other-metric", 5, now.Add(-time.Minute))
	m.AWS(t, "cloudwatch", "put-metric-data", "--namespace", "AWS/SQS", "--metric-name", "NumberOfMessagesSent",
		"--dimensions", "QueueName="+p+"-idle", "--value", "3")

	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	cfg := config.SQS{Name: "moto", Region: testenv.ElasticMQRegion, Endpoint: m.URL(), CloudWatch: config.SQSCloudWatch{OldestAge: true}}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !c.ReadsOldestAge() {
		t.Fatal("ReadsOldestAge is false with cloudwatch.oldest_age on")
	}
	names := []string{p + "-orders", p + "-stale", p + "-idle", p + "-other-metric"}
	got, err := c.OldestAges(t.Context(), names, now)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{p + "-orders": 90 * time.Second, p + "-other-metric": 5 * time.Second}
	if len(got) != len(want) || got[p+"-orders"] != want[p+"-orders"] || got[p+"-other-metric"] != want[p+"-other-metric"] {
		t.Errorf("OldestAges = %v, want %v", got, want)
	}
	if n := c.Requests()["GetMetricData"]; n != 1 {
		t.Errorf("%d GetMetricData requests for %d queues, want 1", n, len(names))
	}
	for i := range 497 {
		names = append(names, p+"-none-"+strconv.Itoa(i))
	}
	if got, err := c.OldestAges(t.Context(), names, now); err != nil || got[p+"-orders"] != 90*time.Second {
		t.Errorf("OldestAges of %d queues = %v, %v", len(names), got[p+"-orders"], err)
	}
	if n := c.Requests()["GetMetricData"]; n != 3 {
		t.Errorf("%d GetMetricData requests after asking for 501 queues, want 1 + 2", n)
	}

	cfg.CloudWatch.OldestAge = false
	off, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := off.OldestAges(t.Context(), names, now); off.ReadsOldestAge() || err != nil || len(got) != 0 || len(off.Requests()) != 0 {
		t.Errorf("without cloudwatch.oldest_age: %v, %v, requests %v; want nothing asked", got, err, off.Requests())
	}
}
