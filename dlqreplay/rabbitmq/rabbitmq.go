// Package rabbitmq browses, replays, moves and deletes messages of RabbitMQ
// dead-letter queues without losing any.
//
// Browsing consumes up to N messages without acknowledging them and then
// returns them all with one basic.nack(multiple, requeue), which puts them
// back in their original order. On a quorum queue every return spends one
// delivery of the queue's delivery-limit (verified on RabbitMQ 3.10: nack,
// channel close and connection close all count), and no read can learn a
// message's count without spending one. So the delivery-limit guard
// (guard.go) remembers what this process last saw of each quorum DLQ —
// message id and x-delivery-count — and refuses, before reading, a browse
// that would bring a message to the limit: it shows the last read again
// (Page.CachedAt) or answers ErrDeliveryLimit, and every page says how many
// safe looks it has left (Page.SafeBrowsesLeft). What the guard remembers
// follows the queue: an empty queue, a job's acks and gives back, and a
// read that no longer finds a message all update it. A message a first
// read finds already at the limit is not returned (that would drop it): a
// confirmed copy is published to the DLQ's tail first and the original
// acked.
//
// A dry run changes nothing: on a quorum queue with a delivery limit it
// reads only the messages the guard knows can spare a delivery (none, in
// a process that has not browsed the queue), and its job note says how
// many it left unread.
//
// A job holds the DLQ with an exclusive consumer (tag queuewatch-job-<id>),
// which makes a second job — from this or any other instance — fail with
// dlqreplay.ErrJobRunning. It processes at most the depth seen at the start,
// so messages that die again during the job are not looped. Each selected
// message is published on a confirm-mode channel with mandatory set; its DLQ
// copy is acked only after the broker confirmed the publish and did not
// return it. A nack, a return, a timeout or a closed channel leaves the
// original in the DLQ and is reported as failed. Acks are followed by a
// synchronous round trip on the consumer channel before messages are
// reported as moved; when the connection dies between an ack and that round
// trip, the outcome is reported as a possible duplicate. Messages that are
// not selected, skipped or failed are held unacknowledged and returned in
// one nack(multiple, requeue) at the end, so they keep their order.
//
// Every connection, AMQP and management API, goes through the cluster's
// access (brokers/rabbitmq), shared with the collector: the configured
// TLS settings and credentials apply to browse and replay as to polls.
//
// Stream DLQs (x-queue-type: stream) are browsed by offset: a stream
// consumer reads the page from the x-stream-offset given as After, and
// consuming removes nothing. The queue type comes from the management API,
// or without it from a probe consume that other queue types refuse. Jobs
// on a stream are refused with dlqreplay.ErrInvalidRequest: a stream keeps
// every message, so there is no original for an ack to remove.
package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// Options configure a Backend.
type Options struct {
	// Cluster is the access to the cluster; its name is the DLQ IDs'
	// second part, and its URL's vhost is replaced by each DLQ's. Its
	// management API (optional) is used to read a queue's type and a
	// quorum queue's delivery-limit, and to name the job of another
	// instance that holds a DLQ. Without it the delivery limit is taken
	// to be unknown (no guard), conflicts carry no job ID, and a queue
	// that reports no messages is probed with a stream consume to tell
	// whether it is a stream.
	Cluster *rabbit.Cluster
	// Prefetch is the consumer prefetch of a job (default 1000). Held
	// messages (not selected, failed) do not count against it.
	Prefetch int
	// ConfirmWindow is how many publishes may await confirms (default
	// 2000). A busy queue confirms in batches, so the window bounds the
	// rate: 500 held a 100,000-message replay to 2,700 msg/s.
	ConfirmWindow int
	// ConfirmTimeout bounds the wait for one publisher confirm (default 30s).
	ConfirmTimeout time.Duration
	// MaxHeld caps the messages a job holds unacknowledged; a job that
	// would hold more stops early and says so (default 200,000).
	MaxHeld int
	// StreamIdle is how long browsing a stream DLQ waits for the next
	// message before taking the page to end there (default 1s): over AMQP
	// 0.9.1 a stream consumer cannot tell its end from a pause.
	StreamIdle time.Duration
	// DialTimeout bounds connecting (default 10s).
	DialTimeout time.Duration
	Logger      *slog.Logger
}

// Backend is a dlqreplay.Backend for one RabbitMQ cluster.
type Backend struct {
	opts Options
	mgmt *rabbit.Client // nil without a management API
	user string

	mu       sync.Mutex
	seen     map[string]*memory     // DLQ ID → what the delivery-limit guard knows
	browsing map[string]*sync.Mutex // DLQ ID → held while a limited DLQ is browsed
}

// New checks the options and returns a Backend; it does not connect.
func New(opts Options) (*Backend, error) {
	if opts.Cluster == nil {
		return nil, errors.New("rabbitmq backend: no cluster")
	}
	if opts.Prefetch <= 0 {
		opts.Prefetch = 1000
	}
	if opts.ConfirmWindow <= 0 {
		opts.ConfirmWindow = 2000
	}
	if opts.ConfirmTimeout <= 0 {
		opts.ConfirmTimeout = 30 * time.Second
	}
	if opts.MaxHeld <= 0 {
		opts.MaxHeld = 200_000
	}
	if opts.StreamIdle <= 0 {
		opts.StreamIdle = time.Second
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Backend{opts: opts, mgmt: opts.Cluster.Management(), user: opts.Cluster.User(), seen: map[string]*memory{}, browsing: map[string]*sync.Mutex{}}, nil
}

// Broker is queue.RabbitMQ.
func (b *Backend) Broker() queue.Broker { return queue.RabbitMQ }

// ExtraTargetKinds declares the exchange target: a replay may go to the
// exchange and routing keys a message was first published with.
func (b *Backend) ExtraTargetKinds() []dlqreplay.TargetKind {
	return []dlqreplay.TargetKind{dlqreplay.TargetOriginalExchange}
}

// Cluster is the configured cluster name.
func (b *Backend) Cluster() string { return b.opts.Cluster.Name() }

// dial connects to vhost within DialTimeout.
func (b *Backend) dial(vhost string) (*amqp.Connection, error) {
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.DialTimeout)
	defer cancel()
	return b.opts.Cluster.Dial(ctx, vhost, "queuewatch dlqreplay")
}

// queueInfo is what the management API tells about a queue.
type queueInfo struct {
	Type          string
	DeliveryLimit int64 // 0: none or unknown
	ConsumerTags  []string
}

// info reads a queue from the management API; without one it returns
// zero values.
func (b *Backend) info(ctx context.Context, vhost, name string) (queueInfo, error) {
	if b.mgmt == nil {
		return queueInfo{}, nil
	}
	q, err := b.mgmt.Queue(ctx, vhost, name)
	if err != nil {
		return queueInfo{}, err
	}
	qi := queueInfo{Type: q.Type}
	qi.DeliveryLimit, _ = q.DeliveryLimit()
	for _, c := range q.ConsumerDetails {
		qi.ConsumerTags = append(qi.ConsumerTags, c.Tag)
	}
	return qi, nil
}

// guardInfo reads the queue's type and delivery limit for the guard. A
// failure turns the guard off and is logged, unless the queue is missing:
// the AMQP side reports that as the error it is.
func (b *Backend) guardInfo(ctx context.Context, ref dlqreplay.Ref) queueInfo {
	qi, err := b.info(ctx, ref.VHost, ref.Name)
	if err != nil && !errors.Is(err, rabbit.ErrNotFound) {
		b.opts.Logger.Warn("read queue info, delivery-limit guard off", "queue", ref.Name, "err", err)
	}
	return qi
}

// holder names the queuewatch job whose exclusive consumer holds the DLQ.
// The management API lists a new consumer with its next statistics
// emission (every 5s by default), so it is asked for a few seconds.
func (b *Backend) holder(ctx context.Context, ref dlqreplay.Ref) string {
	if b.mgmt == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	for {
		qi, err := b.info(ctx, ref.VHost, ref.Name)
		if err != nil {
			return ""
		}
		for _, t := range qi.ConsumerTags {
			if id, ok := strings.CutPrefix(t, jobTagPrefix); ok {
				return id
			}
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(250 * time.Millisecond):
		}
	}
}

const jobTagPrefix = "queuewatch-job-"

// isExclusiveRefusal tells a consume refused because another consumer
// holds the queue exclusively (or we asked for exclusivity and it has
// consumers).
func isExclusiveRefusal(err error) bool {
	var ae *amqp.Error
	return errors.As(err, &ae) && ae.Code == amqp.AccessRefused
}

func isNotFound(err error) bool { return rabbit.IsNotFound(err) }

// Browse reads a page of the DLQ and leaves the DLQ as it was.
//
// Classic and quorum queues: After is the position of the first message to
// show (the previous page's Next); every message is put back in order.
// Pages deep into such a queue cost reading everything before them, so
// After+Limit is capped at 10,000.
//
// Streams: After is the offset of the first message to show; the page is
// read with a stream consumer from that offset and Next is the offset
// after its last message. Nothing is put back since consuming a stream
// removes nothing.
func (b *Backend) Browse(ctx context.Context, ref dlqreplay.Ref, opts dlqreplay.BrowseOptions) (dlqreplay.Page, error) {
	after := -1
	if opts.After != "" {
		n, err := strconv.Atoi(opts.After)
		if err != nil || n < 0 {
			return dlqreplay.Page{}, fmt.Errorf("after %q: want a position or stream offset: %w", opts.After, dlqreplay.ErrInvalidRequest)
		}
		after = n
	}
	qi := b.guardInfo(ctx, ref)
	conn, err := b.dial(ref.VHost)
	if err != nil {
		return dlqreplay.Page{}, err
	}
	defer conn.Close()
	if qi.Type == rabbit.TypeStream {
		return b.streamPage(ctx, conn, ref, int64(after), opts.Limit)
	}
	if qi.DeliveryLimit > 0 {
		// Two browses at once would both pass the guard before either
		// told it what it spent.
		unlock := b.lockBrowse(ref)
		defer unlock()
	}
	br := &browser{b: b, ref: ref, conn: conn, limit: qi.DeliveryLimit, qtype: qi.Type}
	return br.page(ctx, after, opts.Limit)
}

// Restore publishes archived messages to the queue target.Name through the
// default exchange, mandatory and confirmed, and returns the ones the
// broker confirmed. RabbitMQ drops no message for its id, so every
// confirmed copy is a new one. One connection serves all of msgs; each
// is published once pace allowed it.
func (b *Backend) Restore(ctx context.Context, target dlqreplay.Ref, msgs []dlqreplay.Archived, h dlqreplay.RestoreHooks) error {
	conn, err := b.dial(target.VHost)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := checkQueue(conn, target.Name); err != nil {
		return err
	}
	p, err := newPublisher(conn, b.opts.ConfirmWindow, b.opts.ConfirmTimeout)
	if err != nil {
		return err
	}
	for i, m := range msgs {
		if err := h.Pace(ctx); err != nil {
			return err
		}
		pub := archivedPublishing(m, b.user)
		if err := p.publish(ctx, "", target.Name, strconv.Itoa(i), pub); err != nil {
			return err
		}
		res := p.settleAll()
		for _, r := range res {
			if r.err != nil {
				return fmt.Errorf("restore message %s: %w", m.MessageID, r.err)
			}
		}
		h.Answered(dlqreplay.Restored{ID: m.ID})
	}
	return nil
}

// checkQueue tells whether a queue exists, on a throwaway channel since a
// failed passive declare closes the channel.
func checkQueue(conn *amqp.Connection, name string) error {
	if err := validName("queue", name); err != nil {
		return err
	}
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	if _, err := ch.QueueDeclarePassive(name, false, false, false, false, nil); err != nil {
		if isNotFound(err) {
			return fmt.Errorf("queue %q: %w", name, dlqreplay.ErrTargetMissing)
		}
		return fmt.Errorf("check queue %q: %w", name, err)
	}
	return nil
}

// maxNameBytes is AMQP 0-9-1's limit on a queue or exchange name (a
// short string): a longer one is the caller's mistake, not a broker error.
const maxNameBytes = 255

func validName(kind, name string) error {
	if len(name) > maxNameBytes {
		return fmt.Errorf("%s name is %d bytes, AMQP allows at most %d: %w", kind, len(name), maxNameBytes, dlqreplay.ErrInvalidRequest)
	}
	return nil
}

func checkExchange(conn *amqp.Connection, name string) error {
	if name == "" {
		return nil
	}
	if err := validName("exchange", name); err != nil {
		return err
	}
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	if err := ch.ExchangeDeclarePassive(name, "direct", false, false, false, false, nil); err != nil {
		if isNotFound(err) {
			return fmt.Errorf("exchange %q: %w", name, dlqreplay.ErrTargetMissing)
		}
		return fmt.Errorf("check exchange %q: %w", name, err)
	}
	return nil
}
