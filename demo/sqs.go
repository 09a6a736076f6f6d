package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQS demo queues, each name after SQSOptions.Prefix: a standard queue and
// a FIFO queue, each with a DLQ its RedrivePolicy names.
const (
	SQSOrders      = "orders"
	SQSOrdersDLQ   = "orders-dlq"
	SQSPayments    = "payments.fifo"
	SQSPaymentsDLQ = "payments-dlq.fifo"
)

// DefaultSQSPrefix is the prefix of the demo's queue names.
const DefaultSQSPrefix = "demo-"

// SQSRegion is the region the demo's client signs for; a local server
// (ElasticMQ) accepts any.
const SQSRegion = "us-east-1"

// sqsMaxReceiveCount is the demo queues' RedrivePolicy maxReceiveCount:
// SQS moves a message to the DLQ when it is received once more.
const sqsMaxReceiveCount = 3

// sqsVisibilityTimeout is the demo queues' VisibilityTimeout in seconds:
// short, so that a message the consumer fails comes back, and reaches the
// DLQ, within seconds.
const sqsVisibilityTimeout = 1

// seededSQSPoison is how many poison orders StartSQS sends before the
// services start, so the DLQ fills within seconds of the first poll.
const seededSQSPoison = 5

// SQSOptions configure StartSQS.
type SQSOptions struct {
	// Endpoint is the SQS server, such as ElasticMQ at
	// http://127.0.0.1:9324.
	Endpoint string
	// Prefix starts every demo queue name (DefaultSQSPrefix when empty),
	// so that demos sharing a server do not collide.
	Prefix string
	Logger *slog.Logger
}

// SQSDemo runs simulated services on an SQS server.
type SQSDemo struct {
	client *sqs.Client
	prefix string
	urls   map[string]string // queue name (without prefix) → URL
	log    *slog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// StartSQS creates the demo queues on the server at opts.Endpoint and starts
// a producer and a consumer per work queue. The consumer fails the poison
// messages (about 2% of what the producer sends, plus a few seeded at the
// start): it never deletes them, so they come back after the visibility
// timeout, and SQS itself moves them to the DLQ after maxReceiveCount
// receives, as it would on AWS. It returns an error, having created
// nothing, when no server answers.
func StartSQS(ctx context.Context, opts SQSOptions) (*SQSDemo, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	prefix := opts.Prefix
	if prefix == "" {
		prefix = DefaultSQSPrefix
	}
	// A local server checks no credentials, and the demo must not pick
	// up (or need) the user's AWS ones.
	client := sqs.New(sqs.Options{
		Region:       SQSRegion,
		BaseEndpoint: aws.String(opts.Endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("demo", "demo", ""),
	})
	s := &SQSDemo{client: client, prefix: prefix, urls: map[string]string{}, log: log.With("broker", "sqs")}
	probe, cancelProbe := context.WithTimeout(ctx, 3*time.Second)
	defer cancelProbe()
	if _, err := client.ListQueues(probe, &sqs.ListQueuesInput{}, func(o *sqs.Options) { o.RetryMaxAttempts = 1 }); err != nil {
		return nil, fmt.Errorf("no sqs server at %s: %w", opts.Endpoint, err)
	}
	if err := s.createQueues(ctx); err != nil {
		s.deleteQueues()
		return nil, err
	}
	for i := range seededSQSPoison {
		if err := s.send(ctx, SQSOrders, -i-1, true); err != nil {
			s.deleteQueues()
			return nil, fmt.Errorf("seed demo sqs poison: %w", err)
		}
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.goService(ctx, "producer", s.produce)
	s.goService(ctx, "orders-consumer", func(ctx context.Context) error { return s.consume(ctx, SQSOrders) })
	s.goService(ctx, "payments-consumer", func(ctx context.Context) error { return s.consume(ctx, SQSPayments) })
	return s, nil
}

// Prefix is what every demo queue name starts with.
func (s *SQSDemo) Prefix() string { return s.prefix }

// Name is the full name of a demo queue (SQSOrders, …).
func (s *SQSDemo) Name(queue string) string { return s.prefix + queue }

// Close stops the services and deletes the demo queues, so the demo leaves
// nothing behind on a shared server.
func (s *SQSDemo) Close() {
	s.once.Do(func() {
		s.cancel()
		s.wg.Wait()
		s.deleteQueues()
	})
}

func (s *SQSDemo) goService(ctx context.Context, name string, run func(context.Context) error) {
	s.wg.Go(func() {
		if err := run(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("demo service stopped", "service", name, "err", err)
		}
	})
}

// createQueues creates each DLQ, then its source with a RedrivePolicy
// naming the DLQ's ARN.
func (s *SQSDemo) createQueues(ctx context.Context) error {
	for _, pair := range [][2]string{{SQSOrders, SQSOrdersDLQ}, {SQSPayments, SQSPaymentsDLQ}} {
		src, dlq := pair[0], pair[1]
		if err := s.create(ctx, dlq, nil); err != nil {
			return err
		}
		out, err := s.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(s.urls[dlq]), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
		})
		if err != nil {
			return fmt.Errorf("demo sqs queue %s: %w", s.Name(dlq), err)
		}
		policy, _ := json.Marshal(map[string]string{
			"deadLetterTargetArn": out.Attributes[string(types.QueueAttributeNameQueueArn)],
			"maxReceiveCount":     strconv.Itoa(sqsMaxReceiveCount),
		})
		if err := s.create(ctx, src, map[string]string{
			string(types.QueueAttributeNameRedrivePolicy):     string(policy),
			string(types.QueueAttributeNameVisibilityTimeout): strconv.Itoa(sqsVisibilityTimeout),
		}); err != nil {
			return err
		}
	}
	return nil
}

func (s *SQSDemo) create(ctx context.Context, queue string, attrs map[string]string) error {
	if attrs == nil {
		attrs = map[string]string{}
	}
	if isFIFO(queue) {
		attrs[string(types.QueueAttributeNameFifoQueue)] = "true"
	}
	out, err := s.client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(s.Name(queue)), Attributes: attrs})
	if err != nil {
		return fmt.Errorf("create demo sqs queue %s: %w", s.Name(queue), err)
	}
	s.urls[queue] = aws.ToString(out.QueueUrl)
	return nil
}

// deleteQueues deletes the queues created so far, on a context of its own:
// the demo's is usually done by then.
func (s *SQSDemo) deleteQueues() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for name, url := range s.urls {
		if _, err := s.client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)}); err != nil {
			s.log.Warn("delete demo queue", "queue", s.Name(name), "err", err)
		}
	}
}

func isFIFO(queue string) bool { return len(queue) > 5 && queue[len(queue)-5:] == ".fifo" }

// demoTenants are the customers of the demo's messages: a message
// attribute on every message, and the FIFO queue's message groups.
var demoTenants = []string{"acme", "globex", "initech"}

// send sends message n to queue; a poison one has an impossible total,
// which the consumer fails.
func (s *SQSDemo) send(ctx context.Context, queue string, n int, poison bool) error {
	total := float64(rand.IntN(10000)) / 100
	if poison {
		total = -1
	}
	body, _ := json.Marshal(map[string]any{"id": n, "queue": queue, "total": total})
	tenant := demoTenants[(n%3+3)%3]
	in := &sqs.SendMessageInput{
		QueueUrl: aws.String(s.urls[queue]), MessageBody: aws.String(string(body)),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"tenant":       {DataType: aws.String("String"), StringValue: aws.String(tenant)},
			"content-type": {DataType: aws.String("String"), StringValue: aws.String("application/json")},
		},
	}
	if isFIFO(queue) {
		in.MessageGroupId = aws.String(tenant)
		in.MessageDeduplicationId = aws.String(strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(n))
	}
	_, err := s.client.SendMessage(ctx, in)
	return err
}

// produce sends orders and payments at a few messages a second, ~2% of
// them poison.
func (s *SQSDemo) produce(ctx context.Context) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		queue := []string{SQSOrders, SQSOrders, SQSPayments}[n%3]
		if err := s.send(ctx, queue, n, rand.IntN(100) < 2); err != nil {
			return err
		}
	}
}

// consume receives from queue and deletes what it processed. It fails
// poison messages by not deleting them: each comes back after the
// visibility timeout, and SQS moves it to the DLQ after maxReceiveCount
// receives. On the FIFO queue a failed message holds back its group until
// then, as on AWS.
func (s *SQSDemo) consume(ctx context.Context, queue string) error {
	for ctx.Err() == nil {
		out, err := s.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(s.urls[queue]), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		var done []types.DeleteMessageBatchRequestEntry
		for i, m := range out.Messages {
			if poisoned(aws.ToString(m.Body)) {
				continue
			}
			done = append(done, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
		if len(done) == 0 {
			continue
		}
		if _, err := s.client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(s.urls[queue]), Entries: done}); err != nil && ctx.Err() == nil {
			return err
		}
	}
	return nil
}

// poisoned reports whether the consumer fails body: unparsable, or a
// negative total.
func poisoned(body string) bool {
	var m struct {
		Total *float64 `json:"total"`
	}
	return json.Unmarshal([]byte(body), &m) != nil || m.Total == nil || *m.Total < 0
}
