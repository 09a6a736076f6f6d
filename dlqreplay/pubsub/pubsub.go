// Package pubsub browses Google Cloud Pub/Sub dead letters and replays,
// moves and deletes them without losing any.
//
// A Pub/Sub DLQ is a subscription attached to a dead-letter topic, named
// by its short id in the project. Its sources are the subscriptions whose
// deadLetterPolicy names that topic: the backend lists the project's
// subscriptions at every Browse and Open to find them (a DLQ topic that
// is no subscription's dead-letter topic is no DLQ). A dead letter's
// CloudPubSubDeadLetterSourceSubscription attribute names the one it died
// in; a message without it (published straight to the topic) goes back
// only when there is exactly one source.
//
// Pub/Sub has no way to read a message without pulling it: a pull hides
// it for its ack deadline. Browsing pulls and at once gives everything it
// pulled back (ModifyAckDeadline 0), so the messages are deliverable
// again; a subscription without a dead-letter policy counts no delivery
// attempts, so nothing is spent. A DLQ subscription that has a dead-letter
// policy of its own (chained) would move a message on after its delivery
// attempts: it is neither browsed nor replayed (dlqreplay.ErrDeliveryLimit).
// Pub/Sub keeps no order but the publish time, so a page is ordered by it
// (the dead-letter topic's publish time: when the message died).
//
// A job pulls its snapshot (every message the DLQ delivers at Open, up to
// Options.MaxHeld) and holds it, extending the ack deadlines while it
// works. It publishes a copy to the source subscription's topic with the
// data, the attributes (less Pub/Sub's CloudPubSubDeadLetter* facts about
// this death) and the ordering key, plus queue.HeaderReplayCount and
// queue.HeaderReplayID, and acknowledges the dead letter only after
// Publish returned the copy's message id. A copy reaches every
// subscription of that topic, not only the source. What the job keeps is
// given back, in publish order, when it ends.
//
// Replay by seek (native.go, dlqreplay.NativeRedriver) is the narrow
// alternative: only the source subscription is sought back, after a
// snapshot that undoes it.
//
// Pub/Sub has no lock. A job holds its DLQ through a lease topic
// (leaseTopic): created atomically, its labels name the job and when the
// lease runs out. See lease.go for how it is renewed and why it is a
// best-effort lock.
package pubsub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	gps "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// The attributes Pub/Sub adds to a dead letter.
const (
	AttrDeliveryCount      = "CloudPubSubDeadLetterSourceDeliveryCount"
	AttrSourceSubscription = "CloudPubSubDeadLetterSourceSubscription"
	AttrSourceProject      = "CloudPubSubDeadLetterSourceSubscriptionProject"
	AttrSourcePublishTime  = "CloudPubSubDeadLetterSourceTopicPublishTime"
	AttrDeliveryError      = "CloudPubSubDeadLetterSourceDeliveryErrorMessage"
	deadLetterAttrPrefix   = "CloudPubSubDeadLetter"
)

// deletedTopic is the topic a subscription shows once its topic was
// deleted.
const deletedTopic = "_deleted-topic_"

// maxAttributes is the most attributes Pub/Sub accepts on one message.
const maxAttributes = 100

// pullBatch is the most messages one pull asks for.
const pullBatch = 1000

// ackBatch is the most ack ids one Acknowledge or ModifyAckDeadline call
// names (the request stays well under Pub/Sub's 512 KiB).
const ackBatch = 1000

// browseDeadline hides what a browse pulled until it is given back (at
// once), so that one browse never reads a message twice.
const browseDeadline = 30 * time.Second

// Options configure a Backend.
type Options struct {
	// Cluster is the configured name of this project's access.
	Cluster string
	// Project is the Google Cloud project of the subscriptions and topics.
	Project string
	// Endpoint, when set, is an emulator's host:port, reached without TLS
	// or credentials (PUBSUB_EMULATOR_HOST).
	Endpoint string
	// ClientOptions are passed to the client (credentials, a private
	// endpoint, a connection of the caller's).
	ClientOptions []option.ClientOption
	// AckDeadline is how long a job's pulled messages stay hidden (default
	// 60s, at most 600s). The job extends it every third of it while it
	// works, so it only bounds how long a crashed job's messages stay
	// hidden.
	AckDeadline time.Duration
	// LeaseTTL is how long a job's lease on its DLQ lasts unrenewed
	// (default and least: AckDeadline plus a few seconds): a crashed
	// job's DLQ is free again after it, once its messages are back.
	LeaseTTL time.Duration
	// PullWait is how long a pull waits for messages before the
	// subscription counts as read (default 1s).
	PullWait time.Duration
	// MaxHeld is the most messages one job pulls and holds (default
	// 100,000); a larger DLQ is replayed in parts.
	MaxHeld int
	Logger  *slog.Logger
}

// Backend is a dlqreplay.Backend for one Pub/Sub project.
type Backend struct {
	opts Options
	c    *gps.Client
}

// New builds a Backend and its client (no I/O: gRPC connects on first use).
func New(ctx context.Context, opts Options) (*Backend, error) {
	if opts.Project == "" {
		return nil, errors.New("pubsub backend: no project")
	}
	if opts.AckDeadline < 3*time.Second || opts.AckDeadline > 600*time.Second {
		opts.AckDeadline = 60 * time.Second
	}
	// A crashed job's lease must outlast its held messages: a job opened
	// before they are back would leave them in the DLQ.
	if opts.LeaseTTL < opts.AckDeadline+2*time.Second {
		opts.LeaseTTL = opts.AckDeadline + 5*time.Second
	}
	if opts.PullWait <= 0 {
		opts.PullWait = time.Second
	}
	if opts.MaxHeld <= 0 {
		opts.MaxHeld = 100_000
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	co := opts.ClientOptions
	if opts.Endpoint != "" {
		conn, err := grpc.NewClient(opts.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, fmt.Errorf("pubsub emulator %s: %w", opts.Endpoint, err)
		}
		co = append(co, option.WithGRPCConn(conn))
	}
	c, err := gps.NewClient(ctx, opts.Project, co...)
	if err != nil {
		return nil, fmt.Errorf("pubsub client for %s: %w", opts.Project, err)
	}
	return &Backend{opts: opts, c: c}, nil
}

// Close closes the client.
func (b *Backend) Close() error { return b.c.Close() }

// Broker is queue.PubSub.
func (b *Backend) Broker() queue.Broker { return queue.PubSub }

// Cluster is the configured name.
func (b *Backend) Cluster() string { return b.opts.Cluster }

func (b *Backend) subPath(id string) string {
	return "projects/" + b.opts.Project + "/subscriptions/" + id
}

func (b *Backend) topicPath(id string) string { return "projects/" + b.opts.Project + "/topics/" + id }

// shortName is the last element of a resource name; a resource of
// another project keeps its full name.
func (b *Backend) shortName(name string) string {
	prefix := "projects/" + b.opts.Project + "/"
	if rest, ok := strings.CutPrefix(name, prefix); ok {
		_, id, _ := strings.Cut(rest, "/")
		return id
	}
	return name
}

// dlq is a DLQ as the backend found it.
type dlq struct {
	ref dlqreplay.Ref
	sub *pubsubpb.Subscription
	// sources are the subscriptions dead-lettering to the DLQ's topic
	// (full names), each with its topic (full name).
	sources map[string]string
}

// notFound reports Pub/Sub's answer for a resource that does not exist.
func notFound(err error) bool { return status.Code(err) == codes.NotFound }

// lookup finds the DLQ ref names and refuses a DLQ subscription with a
// dead-letter policy of its own.
func (b *Backend) lookup(ctx context.Context, ref dlqreplay.Ref) (*dlq, error) {
	sub, err := b.c.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: b.subPath(ref.Name)})
	if notFound(err) {
		return nil, fmt.Errorf("subscription %s does not exist: %w", ref.Name, dlqreplay.ErrUnknownDLQ)
	}
	if err != nil {
		return nil, fmt.Errorf("get subscription %s: %w", ref.Name, err)
	}
	if p := sub.GetDeadLetterPolicy(); p.GetDeadLetterTopic() != "" {
		return nil, fmt.Errorf("subscription %s has a dead-letter policy of its own (to %s after %d delivery attempts): every read is a delivery attempt, and could move its messages on: %w",
			ref.Name, b.shortName(p.GetDeadLetterTopic()), p.GetMaxDeliveryAttempts(), dlqreplay.ErrDeliveryLimit)
	}
	d := &dlq{ref: ref, sub: sub, sources: map[string]string{}}
	it := b.c.SubscriptionAdminClient.ListSubscriptions(ctx, &pubsubpb.ListSubscriptionsRequest{Project: "projects/" + b.opts.Project})
	for {
		s, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list subscriptions of %s: %w", b.opts.Project, err)
		}
		if s.GetDeadLetterPolicy().GetDeadLetterTopic() == sub.GetTopic() {
			d.sources[s.GetName()] = s.GetTopic()
		}
	}
	if len(d.sources) == 0 {
		return nil, fmt.Errorf("the topic %s of subscription %s is no subscription's dead-letter topic: %w",
			b.shortName(sub.GetTopic()), ref.Name, dlqreplay.ErrUnknownDLQ)
	}
	return d, nil
}

// pull pulls up to n messages hidden for deadline, waiting at most
// PullWait for the first: Pub/Sub answers a pull as soon as messages are
// there, and an empty subscription only when the wait is over
// (return_immediately, which would answer at once, is deprecated, and may
// answer empty while messages wait).
func (b *Backend) pull(ctx context.Context, sub string, n int, deadline time.Duration) ([]*pubsubpb.ReceivedMessage, error) {
	wctx, cancel := context.WithTimeout(ctx, b.opts.PullWait)
	out, err := b.c.SubscriptionAdminClient.Pull(wctx, &pubsubpb.PullRequest{Subscription: sub, MaxMessages: int32(min(n, pullBatch))})
	cancel()
	if ctx.Err() == nil && status.Code(err) == codes.DeadlineExceeded {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pull from %s: %w", b.shortName(sub), err)
	}
	ms := out.GetReceivedMessages()
	if deadline != 0 && len(ms) > 0 {
		// The subscription's own deadline applies to a pull; a job's may
		// be longer.
		if err := b.modifyDeadline(ctx, sub, ackIDs(ms), deadline); err != nil {
			return ms, err
		}
	}
	return ms, nil
}

func ackIDs(ms []*pubsubpb.ReceivedMessage) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.GetAckId()
	}
	return out
}

// modifyDeadline sets the ack deadline of the messages with ids, ackBatch
// per call and in order: a deadline of 0 gives them back.
func (b *Backend) modifyDeadline(ctx context.Context, sub string, ids []string, deadline time.Duration) error {
	for chunk := range slices.Chunk(ids, ackBatch) {
		err := b.c.SubscriptionAdminClient.ModifyAckDeadline(ctx, &pubsubpb.ModifyAckDeadlineRequest{
			Subscription: sub, AckIds: chunk, AckDeadlineSeconds: int32(deadline / time.Second),
		})
		if err != nil {
			return fmt.Errorf("modify the ack deadline of %d messages in %s: %w", len(chunk), b.shortName(sub), err)
		}
	}
	return nil
}

// byPublishTime orders messages by publish time, then by message id
// (numeric ids as numbers): Pub/Sub keeps no other order.
func byPublishTime(a, b *pubsubpb.ReceivedMessage) int {
	if c := a.GetMessage().GetPublishTime().AsTime().Compare(b.GetMessage().GetPublishTime().AsTime()); c != 0 {
		return c
	}
	x, y := a.GetMessage().GetMessageId(), b.GetMessage().GetMessageId()
	if c := cmp.Compare(len(x), len(y)); c != 0 {
		return c
	}
	return strings.Compare(x, y)
}

// Browse pulls the DLQ's first After+Limit messages (After is how many
// earlier pages showed), orders them by publish time, shows the page and
// gives every pulled message back at once, in that order.
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
	want := shown + opts.Limit
	var got []*pubsubpb.ReceivedMessage
	defer func() {
		slices.SortStableFunc(got, byPublishTime)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := b.modifyDeadline(rctx, d.sub.GetName(), ackIDs(got), 0); err != nil {
			b.opts.Logger.Warn("browsed messages not given back; they are back after the ack deadline",
				"cluster", b.Cluster(), "dlq", ref.ID(), "err", err)
		}
	}()
	for len(got) < want {
		ms, err := b.pull(ctx, d.sub.GetName(), want-len(got), browseDeadline)
		got = append(got, ms...)
		if err != nil {
			return dlqreplay.Page{}, err
		}
		if len(ms) == 0 {
			break
		}
	}
	sorted := slices.SortedStableFunc(slices.Values(got), byPublishTime)
	var page dlqreplay.Page
	for i := shown; i < len(sorted) && i < want; i++ {
		page.Messages = append(page.Messages, b.message(d, sorted[i], int64(i)))
	}
	if len(got) >= want && len(page.Messages) > 0 {
		page.Next = strconv.Itoa(want)
	}
	return page, nil
}

// message converts a pulled dead letter: the message id, publish time,
// ordering key and delivery attempt are its properties, its attributes
// its headers, and its death the attributes Pub/Sub added (the source
// subscription, its delivery count, the error of an export
// subscription), grouped like x-death: one death per dead letter.
func (b *Backend) message(d *dlq, rm *pubsubpb.ReceivedMessage, pos int64) queue.Message {
	pm := rm.GetMessage()
	attrs := pm.GetAttributes()
	qm := queue.Message{
		ID: pm.GetMessageId(), Position: pos, Body: pm.GetData(), Timestamp: pm.GetPublishTime().AsTime(),
		Properties: map[string]string{"message_id": pm.GetMessageId(), "publish_time": pm.GetPublishTime().AsTime().Format(time.RFC3339Nano)},
	}
	if k := pm.GetOrderingKey(); k != "" {
		qm.Properties["ordering_key"] = k
	}
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		qm.Headers = append(qm.Headers, queue.Header{Key: k, Value: []byte(attrs[k]), Kind: "string"})
	}
	count, _ := strconv.ParseInt(attrs[AttrDeliveryCount], 10, 64)
	death := queue.Death{Queue: b.sourceOf(d, attrs), Reason: "max_delivery_attempts", Count: count, Time: qm.Timestamp}
	if attrs[AttrDeliveryError] != "" {
		death.Reason = "delivery_error"
	}
	qm.Death = queue.DeathInfo{Deaths: []queue.Death{death}, Framework: "pubsub", ExceptionMessage: attrs[AttrDeliveryError]}
	if t, err := time.Parse(time.RFC3339Nano, attrs[AttrSourcePublishTime]); err == nil {
		qm.Death.OriginalTimestamp = t
	}
	return qm
}

// sourceOf is the short id of the subscription the message died in (a
// full name for another project's): from its attributes, else the DLQ's
// only source, else "".
func (b *Backend) sourceOf(d *dlq, attrs map[string]string) string {
	if s := attrs[AttrSourceSubscription]; s != "" {
		if p := attrs[AttrSourceProject]; p != "" && p != b.opts.Project {
			return "projects/" + p + "/subscriptions/" + s
		}
		return b.shortName(s)
	}
	if len(d.sources) == 1 {
		for s := range d.sources {
			return b.shortName(s)
		}
	}
	return ""
}
