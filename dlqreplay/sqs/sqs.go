// Package sqs browses Amazon SQS dead-letter queues and replays, moves and
// deletes their messages without losing any.
//
// SQS has no way to read a message without receiving it: a receive hides
// the message for a visibility timeout and raises its
// ApproximateReceiveCount. Browsing therefore receives (all system and
// message attributes, ten at a time) and at once makes everything it
// received visible again (visibility 0, one message at a time and in
// order: the entries of a ChangeMessageVisibilityBatch are applied in any
// order, and ElasticMQ orders a queue by when a message became visible). The Go SDK
// never sends a VisibilityTimeout of 0 on a receive (an int32 zero is
// omitted, so the queue's default applies), which is why the reset is an
// explicit call. A DLQ that has a RedrivePolicy of its own (chained DLQs)
// moves a message on once a receive exceeds its maxReceiveCount: such a
// DLQ is neither browsed nor replayed (dlqreplay.ErrDeliveryLimit).
//
// A job receives the snapshot with a visibility timeout it renews while it
// works, sends a copy to the target with the body and every message
// attribute, plus queue.HeaderReplayCount and queue.HeaderReplayID, and
// deletes the DLQ copy (DeleteMessageBatch) only after the send
// succeeded. Messages the job keeps stay hidden until it ends and are then
// made visible again in the order they were received. On a FIFO target
// the copy keeps its MessageGroupId, copies are sent one at a time in DLQ
// order, and the MessageDeduplicationId is derived from the job and the
// message, so a send retried within SQS's five-minute window is dropped.
//
// SQS has no lock. A job refuses to open a DLQ with messages in flight:
// another job (of any instance) holds every message it received until it
// deletes or returns it, and reads ahead so that it always holds some.
// This is a check, not an atomic lock: two jobs opened in the same instant
// can both pass it; within one instance dlqreplay's own lock excludes them.
package sqs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	brokersqs "github.com/queuewatch/queuewatch/brokers/sqs"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// maxAttributes is the most message attributes SQS accepts on one message.
const maxAttributes = 10

// batchSize is the most entries one SQS receive or batch call takes.
const batchSize = 10

// browseVisibility hides what a browse received until it is given back
// (at once), so that one browse never reads a message twice.
const browseVisibility = 30 * time.Second

// Options configure a Backend.
type Options struct {
	// Cluster is the access to the account, shared with its collector.
	Cluster *brokersqs.Cluster
	// VisibilityTimeout hides the messages a job received (default 30s).
	// The job renews it every third of it while it works, so it only
	// bounds how long a crashed job's messages stay hidden.
	VisibilityTimeout time.Duration
	Logger            *slog.Logger
}

// Backend is a dlqreplay.Backend for one SQS account.
type Backend struct {
	opts Options
	c    *sdk.Client
	own  ownReceives
}

// ownReceives counts, per message ID, the receives of this process: SQS
// raises a message's ApproximateReceiveCount at every receive, browses
// too, so the count a DLQ message shows is its consumers' receives plus
// queuewatch's. Another replica's or an earlier process's are not known.
type ownReceives struct {
	mu sync.Mutex
	n  map[string]int64
}

// maxOwnReceives bounds the counted messages; past it the count starts
// over (the pages then say fewer receives were queuewatch's).
const maxOwnReceives = 100_000

func (o *ownReceives) add(ms []types.Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil || len(o.n) >= maxOwnReceives {
		o.n = map[string]int64{}
	}
	for _, m := range ms {
		o.n[aws.ToString(m.MessageId)]++
	}
}

func (o *ownReceives) of(id string) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[id]
}

// New builds a Backend over the account's SDK client.
func New(opts Options) (*Backend, error) {
	if opts.Cluster == nil {
		return nil, errors.New("sqs backend: no cluster")
	}
	if opts.VisibilityTimeout < 3*time.Second {
		opts.VisibilityTimeout = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Backend{opts: opts, c: opts.Cluster.Client()}, nil
}

// Broker is queue.SQS.
func (b *Backend) Broker() queue.Broker { return queue.SQS }

// Cluster is the configured account name.
func (b *Backend) Cluster() string { return b.opts.Cluster.Name() }

// dlq is a DLQ as the backend found it.
type dlq struct {
	name    string
	url     string
	attrs   map[string]string
	sources []string // queues whose redrive policy names it
}

// notExist reports SQS's answer for a queue that does not exist.
func notExist(err error) bool {
	var qe *types.QueueDoesNotExist
	if errors.As(err, &qe) {
		return true
	}
	var api smithy.APIError
	return errors.As(err, &api) && strings.Contains(api.ErrorCode(), "NonExistentQueue")
}

// queueURL is the URL of the queue named name; a queue that does not
// exist is dlqreplay.ErrTargetMissing.
func (b *Backend) queueURL(ctx context.Context, name string) (string, error) {
	out, err := b.c.GetQueueUrl(ctx, &sdk.GetQueueUrlInput{QueueName: aws.String(name)})
	if notExist(err) {
		return "", fmt.Errorf("queue %s does not exist: %w", name, dlqreplay.ErrTargetMissing)
	}
	if err != nil {
		return "", fmt.Errorf("get queue url %s: %w", name, err)
	}
	return aws.ToString(out.QueueUrl), nil
}

// lookup finds the DLQ ref names: an existing queue that is some queue's
// dead-letter target, without a redrive policy of its own.
func (b *Backend) lookup(ctx context.Context, ref dlqreplay.Ref) (*dlq, error) {
	d, err := b.findDLQ(ctx, ref)
	if err != nil {
		return nil, err
	}
	if p, _ := brokersqs.ParseRedrivePolicy(d.attrs["RedrivePolicy"]); p.DeadLetterTargetARN != "" {
		return nil, fmt.Errorf("dlq %s has a redrive policy of its own (to %s after %d receives): every read is a receive that counts, and could move its messages on: %w",
			ref.Name, p.DeadLetterTargetARN, p.MaxReceiveCount, dlqreplay.ErrDeliveryLimit)
	}
	return d, nil
}

// findDLQ finds the DLQ ref names: an existing queue that is some queue's
// dead-letter target, with its attributes and its sources.
func (b *Backend) findDLQ(ctx context.Context, ref dlqreplay.Ref) (*dlq, error) {
	url, err := b.queueURL(ctx, ref.Name)
	if errors.Is(err, dlqreplay.ErrTargetMissing) {
		return nil, fmt.Errorf("queue %s does not exist: %w", ref.Name, dlqreplay.ErrUnknownDLQ)
	}
	if err != nil {
		return nil, err
	}
	d := &dlq{name: ref.Name, url: url}
	if d.attrs, err = b.opts.Cluster.Attributes(ctx, url); err != nil {
		return nil, err
	}
	pages := sdk.NewListDeadLetterSourceQueuesPaginator(b.c, &sdk.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(url)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list dead-letter source queues of %s: %w", ref.Name, err)
		}
		for _, u := range page.QueueUrls {
			d.sources = append(d.sources, brokersqs.QueueNameFromURL(u))
		}
	}
	if len(d.sources) == 0 {
		return nil, fmt.Errorf("queue %s is no queue's dead-letter target: %w", ref.Name, dlqreplay.ErrUnknownDLQ)
	}
	return d, nil
}

// count is a numeric queue attribute, 0 when absent.
func (d *dlq) count(attr string) int64 {
	n, _ := strconv.ParseInt(d.attrs[attr], 10, 64)
	return n
}

// receive receives up to n messages hidden for vis. An empty short poll
// is asked again with a one-second long poll, which asks every SQS server
// (a short poll samples some, and may answer empty while messages wait).
func (b *Backend) receive(ctx context.Context, url string, n int, vis time.Duration) ([]types.Message, error) {
	for _, wait := range []int32{0, 1} {
		out, err := b.c.ReceiveMessage(ctx, &sdk.ReceiveMessageInput{
			QueueUrl: aws.String(url), MaxNumberOfMessages: int32(min(n, batchSize)),
			VisibilityTimeout: int32(vis / time.Second), WaitTimeSeconds: wait,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			return nil, fmt.Errorf("receive from %s: %w", brokersqs.QueueNameFromURL(url), err)
		}
		if len(out.Messages) > 0 {
			b.sawSent(url, out.Messages)
			b.own.add(out.Messages)
			return out.Messages, nil
		}
	}
	return nil, nil
}

// sawSent tells the account's access the send times of messages just
// received from the queue at url: the collector estimates the queue's
// oldest age from them (brokers/sqs SawSent).
func (b *Backend) sawSent(url string, ms []types.Message) {
	name := brokersqs.QueueNameFromURL(url)
	for _, m := range ms {
		if t, ok := brokersqs.SentTimestamp(m.Attributes); ok {
			b.opts.Cluster.SawSent(name, t)
		}
	}
}

// giveBack makes the messages with handles visible again, one call each
// and in order: the entries of one batch call come back in any order. A
// queue is ordered by the millisecond a message became visible, ties in
// any order (ElasticMQ), so each call starts in a millisecond after the
// previous one answered; against AWS a call takes longer than that anyway.
func (b *Backend) giveBack(ctx context.Context, url string, handles []string) error {
	var errs []error
	var last time.Time
	for _, h := range handles {
		time.Sleep(time.Until(last.Truncate(time.Millisecond).Add(time.Millisecond)))
		_, err := b.c.ChangeMessageVisibility(ctx, &sdk.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(h)})
		last = time.Now()
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("make %d messages in %s visible again: %w", len(errs), brokersqs.QueueNameFromURL(url), err)
	}
	return nil
}

// setVisibility sets the visibility timeout of the messages with handles,
// ten per call.
func (b *Backend) setVisibility(ctx context.Context, url string, handles []string, vis time.Duration) error {
	var errs []error
	for chunk := range slices.Chunk(handles, batchSize) {
		entries := make([]types.ChangeMessageVisibilityBatchRequestEntry, len(chunk))
		for i, h := range chunk {
			entries[i] = types.ChangeMessageVisibilityBatchRequestEntry{
				Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h), VisibilityTimeout: int32(vis / time.Second),
			}
		}
		out, err := b.c.ChangeMessageVisibilityBatch(ctx, &sdk.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(url), Entries: entries})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range out.Failed {
			errs = append(errs, fmt.Errorf("%s: %s", aws.ToString(f.Code), aws.ToString(f.Message)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("change message visibility in %s: %w", brokersqs.QueueNameFromURL(url), err)
	}
	return nil
}

// Browse receives a page from the head of the DLQ, converts it and makes
// every message it received visible again at once, in order (giveBack).
// A queue is ordered by when a message became visible, so the page goes
// to the back of it: the next page is at the head again. After is how
// many messages earlier pages showed; paging on walks the queue round, and
// once every page was read it is in its first order again.
func (b *Backend) Browse(ctx context.Context, ref dlqreplay.Ref, opts dlqreplay.BrowseOptions) (dlqreplay.Page, error) {
	shown := 0
	if opts.After != "" {
		n, err := strconv.Atoi(opts.After)
		if err != nil || n < 0 {
			return dlqreplay.Page{}, fmt.Errorf("after %q: want a message count: %w", opts.After, dlqreplay.ErrInvalidRequest)
		}
		shown = n
	}
	d, err := b.lookup(ctx, ref)
	if err != nil {
		return dlqreplay.Page{}, err
	}
	depth := int(d.count("ApproximateNumberOfMessages"))
	want := min(opts.Limit, depth-shown)
	var got []types.Message
	defer func() {
		handles := make([]string, len(got))
		for i, m := range got {
			handles[i] = aws.ToString(m.ReceiptHandle)
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := b.giveBack(rctx, d.url, handles); err != nil {
			b.opts.Logger.Warn("browsed messages not made visible again; they are back after the visibility timeout",
				"cluster", b.Cluster(), "dlq", ref.ID(), "err", err)
		}
	}()
	for len(got) < want {
		ms, err := b.receive(ctx, d.url, want-len(got), browseVisibility)
		if err != nil {
			return dlqreplay.Page{}, err
		}
		if len(ms) == 0 {
			break
		}
		got = append(got, ms...)
	}
	var page dlqreplay.Page
	for i, m := range got {
		page.Messages = append(page.Messages, d.message(m, int64(shown+i), b.own.of(aws.ToString(m.MessageId))))
	}
	if shown+len(got) < depth && len(got) > 0 {
		page.Next = strconv.Itoa(shown + len(got))
	}
	return page, nil
}

// message converts a received message: its system attributes are its
// properties, its message attributes its headers (Kind is the data type),
// and its death names the source queue and counts its receives, own of
// them this process's.
func (d *dlq) message(m types.Message, pos, own int64) queue.Message {
	qm := queue.Message{
		ID: aws.ToString(m.MessageId), Position: pos, Body: []byte(aws.ToString(m.Body)),
		Properties: maps.Clone(m.Attributes),
	}
	if t, ok := brokersqs.SentTimestamp(m.Attributes); ok {
		qm.Timestamp = t
	}
	for _, k := range slices.Sorted(maps.Keys(m.MessageAttributes)) {
		v := m.MessageAttributes[k]
		h := queue.Header{Key: k, Kind: aws.ToString(v.DataType), Value: []byte(aws.ToString(v.StringValue))}
		if strings.HasPrefix(h.Kind, "Binary") {
			h.Value = v.BinaryValue
		}
		qm.Headers = append(qm.Headers, h)
	}
	source := ""
	if arn := m.Attributes["DeadLetterQueueSourceArn"]; arn != "" {
		source, _ = brokersqs.QueueNameFromARN(arn)
	}
	if source == "" && len(d.sources) == 1 {
		source = d.sources[0]
	}
	received, _ := strconv.ParseInt(m.Attributes["ApproximateReceiveCount"], 10, 64)
	qm.Death.Deaths = []queue.Death{{Queue: source, Reason: "max_receive_count", Count: received, Own: min(own, received)}}
	return qm
}

// attribute is h as an SQS message attribute.
func attribute(h queue.Header) types.MessageAttributeValue {
	kind := h.Kind
	if kind == "" {
		kind = "String"
	}
	if strings.HasPrefix(kind, "Binary") {
		return types.MessageAttributeValue{DataType: aws.String(kind), BinaryValue: h.Value}
	}
	return types.MessageAttributeValue{DataType: aws.String(kind), StringValue: aws.String(string(h.Value))}
}

// dedupID is a deterministic MessageDeduplicationId (at most 128
// characters) for the parts given.
func dedupID(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "qw-" + hex.EncodeToString(sum[:])
}

// refused reports a refusal from SQS (a client error: throttled, invalid,
// no such queue): the send stored nothing. Anything else may have stored
// it: a cut connection, a timeout, or a server error (5xx, from SQS or a
// proxy in front of it that lost SQS's answer).
func refused(err error) bool {
	var resp *smithyhttp.ResponseError
	if errors.As(err, &resp) && resp.HTTPStatusCode() >= 500 {
		return false
	}
	var api smithy.APIError
	return errors.As(err, &api)
}

// Restore sends archived messages to the queue target.Name, with their
// message attributes; on a FIFO queue each carries its group and the
// deduplication id of its archive row, so a restore retried within five
// minutes sends each once.
func (b *Backend) Restore(ctx context.Context, target dlqreplay.Ref, msgs []dlqreplay.Archived, h dlqreplay.RestoreHooks) error {
	url, err := b.queueURL(ctx, target.Name)
	if err != nil {
		return err
	}
	for _, a := range msgs {
		if len(a.Headers) > maxAttributes {
			return fmt.Errorf("restore message %s: %d message attributes, SQS allows %d", a.MessageID, len(a.Headers), maxAttributes)
		}
		if err := h.Pace(ctx); err != nil {
			return err
		}
		in := &sdk.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(string(a.Body)), MessageAttributes: map[string]types.MessageAttributeValue{}}
		for _, hd := range a.Headers {
			in.MessageAttributes[hd.Key] = attribute(hd)
		}
		if brokersqs.IsFIFO(target.Name) {
			in.MessageGroupId = aws.String(groupID(a.Properties))
			in.MessageDeduplicationId = aws.String(dedupID("restore", a.RestoreID))
		}
		if _, err := b.c.SendMessage(ctx, in); err != nil {
			return fmt.Errorf("restore message %s: %w", a.MessageID, err)
		}
		h.Answered(dlqreplay.Restored{ID: a.ID})
	}
	return nil
}

// groupID is the message's FIFO group, or one group for messages from a
// standard queue sent to a FIFO one.
func groupID(props map[string]string) string {
	if g := props["MessageGroupId"]; g != "" {
		return g
	}
	return "queuewatch"
}

// BrowseRotates tells the service that Browse sends the page it read to
// the back of the queue (see Browse), so it reads no more than the page.
func (b *Backend) BrowseRotates() bool { return true }
