package kinesis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/queuewatch/queuewatch/brokers/awsaccess"
	"github.com/queuewatch/queuewatch/config"
)

// Cluster is the access to one configured Kinesis account and region and
// the lease tables of its applications.
type Cluster struct {
	cfg     config.Kinesis
	kinesis *kinesis.Client
	dynamo  *dynamodb.Client
	reqs    awsaccess.RequestCounter
}

// New builds the access to cfg's account with the AWS credential chain
// (and role) SQS uses, cfg's region and, when set, its endpoints. It
// reads the shared AWS config files; it does not connect.
func New(cfg config.Kinesis) (*Cluster, error) {
	c := &Cluster{cfg: cfg}
	awsCfg, err := awsaccess.Config(cfg.Region, cfg.RoleARN)
	if err != nil {
		return nil, fmt.Errorf("kinesis %s: %w", cfg.Name, err)
	}
	c.kinesis = kinesis.NewFromConfig(awsCfg, func(o *kinesis.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.APIOptions = append(o.APIOptions, c.reqs.Install)
	})
	c.dynamo = dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if cfg.DynamoDBEndpoint != "" {
			o.BaseEndpoint = aws.String(cfg.DynamoDBEndpoint)
		}
		o.APIOptions = append(o.APIOptions, c.reqs.Install)
	})
	return c, nil
}

// Name is the configured account name.
func (c *Cluster) Name() string { return c.cfg.Name }

// Config is the account's configuration section.
func (c *Cluster) Config() config.Kinesis { return c.cfg }

// Requests is how many requests were sent since New, per action, to
// Kinesis and DynamoDB together: every attempt, retries included.
func (c *Cluster) Requests() map[string]int64 { return c.reqs.Counts() }

// Stream is what a stream's description says: its shards, retention and
// enhanced fan-out consumers.
type Stream struct {
	Name      string
	ARN       string
	Status    string
	Retention time.Duration
	Shards    []Shard
	Consumers []Consumer
}

// Shard is one shard of a stream, open or closed by a reshard.
type Shard struct {
	ID string
	// Parent and AdjacentParent name the shards it was split or merged
	// from; empty for a shard of the stream's creation.
	Parent, AdjacentParent string
	// Open is false once a reshard closed it: it has an ending sequence
	// number and no record is written to it any more.
	Open bool
}

// Consumer is an enhanced fan-out consumer registered on a stream.
type Consumer struct {
	Name    string
	Status  string
	Created time.Time
}

// ListStreams lists the names of the account's streams, every page.
func (c *Cluster) ListStreams(ctx context.Context) ([]string, error) {
	var names []string
	pages := kinesis.NewListStreamsPaginator(c.kinesis, &kinesis.ListStreamsInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list streams: %w", err)
		}
		names = append(names, page.StreamNames...)
	}
	return names, nil
}

// DescribeStream reads a stream's summary, every shard (ListShards pages)
// and its enhanced fan-out consumers.
func (c *Cluster) DescribeStream(ctx context.Context, name string) (Stream, error) {
	sum, err := c.kinesis.DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: aws.String(name)})
	if err != nil {
		return Stream{}, fmt.Errorf("describe stream %s: %w", name, err)
	}
	d := sum.StreamDescriptionSummary
	s := Stream{
		Name: name, ARN: aws.ToString(d.StreamARN), Status: string(d.StreamStatus),
		Retention: time.Duration(aws.ToInt32(d.RetentionPeriodHours)) * time.Hour,
	}
	if s.Shards, err = c.shards(ctx, name); err != nil {
		return s, err
	}
	s.Consumers, err = c.consumers(ctx, s.ARN)
	return s, err
}

func (c *Cluster) shards(ctx context.Context, stream string) ([]Shard, error) {
	var out []Shard
	in := &kinesis.ListShardsInput{StreamName: aws.String(stream)}
	for {
		page, err := c.kinesis.ListShards(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list shards %s: %w", stream, err)
		}
		for _, sh := range page.Shards {
			out = append(out, shardOf(sh))
		}
		if page.NextToken == nil {
			return out, nil
		}
		// A page after the first names the token alone.
		in = &kinesis.ListShardsInput{NextToken: page.NextToken}
	}
}

func shardOf(sh types.Shard) Shard {
	open := sh.SequenceNumberRange == nil || sh.SequenceNumberRange.EndingSequenceNumber == nil
	return Shard{
		ID: aws.ToString(sh.ShardId), Parent: aws.ToString(sh.ParentShardId),
		AdjacentParent: aws.ToString(sh.AdjacentParentShardId), Open: open,
	}
}

func (c *Cluster) consumers(ctx context.Context, arn string) ([]Consumer, error) {
	var out []Consumer
	pages := kinesis.NewListStreamConsumersPaginator(c.kinesis, &kinesis.ListStreamConsumersInput{StreamARN: aws.String(arn)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list stream consumers %s: %w", arn, err)
		}
		for _, sc := range page.Consumers {
			out = append(out, Consumer{Name: aws.ToString(sc.ConsumerName), Status: string(sc.ConsumerStatus), Created: aws.ToTime(sc.ConsumerCreationTimestamp)})
		}
	}
	return out, nil
}

// Position is what one read at a checkpoint found.
type Position struct {
	// Behind is MillisBehindLatest of the read: how far the record at
	// the checkpoint is behind the shard's newest record; 0 when the
	// checkpoint is the newest record (or the shard holds none).
	Behind time.Duration
	// Arrival is the ApproximateArrivalTimestamp of the record read, zero
	// when the read returned none (nothing at or after the position).
	Arrival time.Time
}

// ErrExpired is a checkpoint the stream no longer holds: its record is
// past the retention period (the iterator request is refused).
var ErrExpired = errors.New("checkpoint past the stream's retention")

// ReadAt reads one record at checkpoint of stream's shard: a sequence
// number (AT_SEQUENCE_NUMBER: the checkpointed record itself) or
// TRIM_HORIZON (the shard's oldest). It costs one GetShardIterator and
// one GetRecords, two of the shard's five reads a second.
func (c *Cluster) ReadAt(ctx context.Context, stream, shard, checkpoint string) (Position, error) {
	in := &kinesis.GetShardIteratorInput{StreamName: aws.String(stream), ShardId: aws.String(shard)}
	if checkpoint == CheckpointTrimHorizon {
		in.ShardIteratorType = types.ShardIteratorTypeTrimHorizon
	} else {
		in.ShardIteratorType = types.ShardIteratorTypeAtSequenceNumber
		in.StartingSequenceNumber = aws.String(checkpoint)
	}
	it, err := c.kinesis.GetShardIterator(ctx, in)
	if err != nil {
		if _, ok := errors.AsType[*types.InvalidArgumentException](err); ok && checkpoint != CheckpointTrimHorizon {
			return Position{}, fmt.Errorf("shard iterator %s/%s: %w: %w", stream, shard, ErrExpired, err)
		}
		return Position{}, fmt.Errorf("shard iterator %s/%s: %w", stream, shard, err)
	}
	out, err := c.kinesis.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: it.ShardIterator, Limit: aws.Int32(1)})
	if err != nil {
		return Position{}, fmt.Errorf("get records %s/%s: %w", stream, shard, err)
	}
	p := Position{Behind: time.Duration(aws.ToInt64(out.MillisBehindLatest)) * time.Millisecond}
	if len(out.Records) > 0 {
		p.Arrival = aws.ToTime(out.Records[0].ApproximateArrivalTimestamp)
	}
	return p, nil
}
