package sqs

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
)

// cloudWatchVersion is the CloudWatch API version the Query protocol
// names in every request.
const cloudWatchVersion = "2010-08-01"

// CloudWatch's ApproximateAgeOfOldestMessage, as queuewatch asks for it:
// the maximum over each minute, the latest datapoint of the last five
// minutes (SQS sends its metrics to CloudWatch every minute or so, a
// little late).
const (
	cwNamespace = "AWS/SQS"
	cwMetric    = "ApproximateAgeOfOldestMessage"
	cwPeriod    = 60
	cwWindow    = 5 * time.Minute
	// cwMaxQueries is the most metrics one GetMetricData call takes.
	cwMaxQueries = 500
)

// ReadsOldestAge reports whether the account reads CloudWatch's
// ApproximateAgeOfOldestMessage (config cloudwatch.oldest_age).
func (c *Cluster) ReadsOldestAge() bool { return c.cw != nil }

// OldestAges reads ApproximateAgeOfOldestMessage of the queues named in
// names as of now from CloudWatch: one GetMetricData call per 500 queues,
// billed per metric asked for. A queue with no datapoint in the last five
// minutes (idle, new, or not on AWS) is left out of the result.
func (c *Cluster) OldestAges(ctx context.Context, names []string, now time.Time) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	if c.cw == nil {
		return out, nil
	}
	for start := 0; start < len(names); start += cwMaxQueries {
		chunk := names[start:min(start+cwMaxQueries, len(names))]
		if err := c.oldestAges(ctx, chunk, now, out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// oldestAges asks for up to 500 queues in one GetMetricData call (more
// pages only when CloudWatch cuts the answer) and adds each queue's
// latest datapoint to out.
func (c *Cluster) oldestAges(ctx context.Context, names []string, now time.Time, out map[string]time.Duration) error {
	in := &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(now.Add(-cwWindow)), EndTime: aws.Time(now),
		ScanBy: cwtypes.ScanByTimestampDescending,
	}
	for i, name := range names {
		in.MetricDataQueries = append(in.MetricDataQueries, cwtypes.MetricDataQuery{
			// An id starts with a lower-case letter; a queue name may not.
			Id: aws.String("q" + strconv.Itoa(i)),
			MetricStat: &cwtypes.MetricStat{
				Metric: &cwtypes.Metric{
					Namespace: aws.String(cwNamespace), MetricName: aws.String(cwMetric),
					Dimensions: []cwtypes.Dimension{{Name: aws.String("QueueName"), Value: aws.String(name)}},
				},
				Period: aws.Int32(cwPeriod), Stat: aws.String("Maximum"),
			},
		})
	}
	latest := map[string]time.Time{}
	pages := cloudwatch.NewGetMetricDataPaginator(c.cw, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("cloudwatch get metric data: %w", err)
		}
		for _, r := range page.MetricDataResults {
			i, err := strconv.Atoi(strings.TrimPrefix(aws.ToString(r.Id), "q"))
			if err != nil || i < 0 || i >= len(names) {
				continue
			}
			for k := range min(len(r.Timestamps), len(r.Values)) {
				if r.Timestamps[k].After(latest[names[i]]) {
					latest[names[i]] = r.Timestamps[k]
					out[names[i]] = time.Duration(r.Values[k] * float64(time.Second))
				}
			}
		}
	}
	return nil
}
