package sqs

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"

	"github.com/queuewatch/queuewatch/brokers/awsaccess"
	"github.com/queuewatch/queuewatch/config"
)

// Cluster is the access to one configured SQS account and region.
type Cluster struct {
	cfg    config.SQS
	client *sqs.Client
	// cw reads CloudWatch, nil unless cloudwatch.oldest_age is on.
	cw   *cloudwatch.Client
	reqs awsaccess.RequestCounter

	mu sync.Mutex
	// oldest is the oldest SentTimestamp receives saw per queue name
	// (oldest.go).
	oldest map[string]time.Time
}

// New builds the access to cfg's account: the SDK's default credential
// chain (or the role cfg names, assumed with it), cfg's region and, when
// set, its endpoint. It reads the shared AWS config files; it does not
// connect.
func New(cfg config.SQS) (*Cluster, error) {
	c := &Cluster{cfg: cfg}
	awsCfg, err := awsaccess.Config(cfg.Region, cfg.RoleARN)
	if err != nil {
		return nil, fmt.Errorf("sqs %s: %w", cfg.Name, err)
	}
	c.client = sqs.NewFromConfig(awsCfg, func(o *sqs.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.APIOptions = append(o.APIOptions, c.reqs.Install)
	})
	if cfg.CloudWatch.OldestAge {
		// The endpoint, when set, serves CloudWatch too (LocalStack and
		// moto serve every service on one port).
		c.cw = cloudwatch.NewFromConfig(awsCfg, func(o *cloudwatch.Options) {
			if cfg.Endpoint != "" {
				o.BaseEndpoint = aws.String(cfg.Endpoint)
			}
			// CloudWatch's Query protocol, which AWS still serves and moto
			// answers; moto 5.2.1 answers the SDK's default, RPCv2 CBOR,
			// with a 404, and the protocol in use should be the tested one.
			o.Protocol = awsquery.New(smithy.NewServiceSchema(nil, cloudWatchVersion))
			o.APIOptions = append(o.APIOptions, c.reqs.Install)
		})
	}
	return c, nil
}

// Name is the configured account name.
func (c *Cluster) Name() string { return c.cfg.Name }

// Config is the account's configuration section.
func (c *Cluster) Config() config.SQS { return c.cfg }

// Client is the SDK client every request to the account goes through, so
// that each is counted.
func (c *Cluster) Client() *sqs.Client { return c.client }

// Requests is how many requests the client sent since New, per action
// (ListQueues, GetQueueAttributes, ...): every attempt, retries included,
// as AWS bills them.
func (c *Cluster) Requests() map[string]int64 { return c.reqs.Counts() }

// listPageSize is ListQueues' MaxResults, the most SQS allows. Without
// MaxResults SQS answers at most 1,000 names and no NextToken, silently
// leaving out the rest.
const listPageSize = 1000

// ListQueueURLs lists the URLs of the queues whose names start with the
// configured prefix, following every page (1,000 names each).
func (c *Cluster) ListQueueURLs(ctx context.Context) ([]string, error) {
	in := &sqs.ListQueuesInput{MaxResults: aws.Int32(listPageSize)}
	if c.cfg.Queues.Prefix != "" {
		in.QueueNamePrefix = aws.String(c.cfg.Queues.Prefix)
	}
	var urls []string
	pages := sqs.NewListQueuesPaginator(c.client, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list queues: %w", err)
		}
		urls = append(urls, page.QueueUrls...)
	}
	return urls, nil
}

// Attributes reads every attribute of the queue at url.
func (c *Cluster) Attributes(ctx context.Context, url string) (map[string]string, error) {
	out, err := c.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll},
	})
	if err != nil {
		return nil, fmt.Errorf("get queue attributes %s: %w", QueueNameFromURL(url), err)
	}
	return out.Attributes, nil
}

// Actions are the actions in counts, sorted, for a stable output order.
func Actions(counts map[string]int64) []string { return awsaccess.Actions(counts) }
