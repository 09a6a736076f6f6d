// Package nats browses the dead letters queuewatch captured from NATS
// JetStream and replays, moves and deletes them without losing any.
//
// JetStream has no DLQ: brokers/nats captures a copy of each message a
// consumer gave up on (max_deliver reached, or AckTerm) into the
// dead-letter stream, on subject "<dead-letter stream>.<stream>.<consumer>".
// A DLQ here is one consumer's copies; browsing reads them by sequence
// (stream "get message", next by subject), which creates no consumer and
// changes nothing.
//
// A replay publishes the original body and headers to the original
// subject (a move: to a named subject) with Nats-Msg-Id set from the
// original stream, sequence and replay count and the copy's sequence
// (brokers/nats.ReplayMsgID), plus
// queue.HeaderReplayCount and queue.HeaderReplayID, and waits for the
// target stream's publish ack; only then is the captured copy deleted from
// the dead-letter stream. A crash between the two leaves the copy, which a
// later job publishes again with the same Nats-Msg-Id: within the target
// stream's duplicate window the stream drops it, after it the copy is a
// duplicate the receipt reports as possible. A refused publish (stream
// full with discard new, no stream for the subject) stores nothing; a
// publish whose ack never came may have stored the copy and is reported
// as a possible duplicate. Either stops the job.
//
// One job per DLQ across instances: a job holds a lease, a key in a
// JetStream key-value bucket ("<dead-letter stream>_LEASES") created with
// KV Create, which fails while another instance's key exists. The job
// renews it every third of the bucket's TTL; a crashed instance's lease
// expires with the TTL, so its DLQ is free again after at most that long.
// A dry run takes no lease: it changes nothing.
package nats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// Options configure a Backend.
type Options struct {
	// Cluster is the access to the cluster, shared with its collector and
	// dead-letter capture.
	Cluster *brokernats.Cluster
	// LeaseTTL is the lease bucket's TTL when this backend creates it
	// (default 30s): how long a crashed job's DLQ stays locked.
	LeaseTTL time.Duration
	Logger   *slog.Logger
}

// Backend is a dlqreplay.Backend for one NATS cluster.
type Backend struct {
	opts Options
}

// New builds a Backend; it connects per browse and per job.
func New(opts Options) (*Backend, error) {
	if opts.Cluster == nil {
		return nil, errors.New("nats backend: no cluster")
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Backend{opts: opts}, nil
}

// Broker is queue.NATS.
func (b *Backend) Broker() queue.Broker { return queue.NATS }

// Cluster is the configured cluster name.
func (b *Backend) Cluster() string { return b.opts.Cluster.Name() }

// conn is one connection and the dead-letter stream.
type conn struct {
	nc *nats.Conn
	js jetstream.JetStream
	dl jetstream.Stream
}

func (b *Backend) connect(ctx context.Context, purpose string) (*conn, error) {
	nc, js, err := b.opts.Cluster.Connect(ctx, purpose)
	if err != nil {
		return nil, err
	}
	dl, err := js.Stream(ctx, b.opts.Cluster.DeadLetterStream())
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		nc.Close()
		return nil, fmt.Errorf("dead-letter stream %s (is dead_letters.capture on?): %w", b.opts.Cluster.DeadLetterStream(), dlqreplay.ErrUnknownDLQ)
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("dead-letter stream %s: %w", b.opts.Cluster.DeadLetterStream(), err)
	}
	return &conn{nc: nc, js: js, dl: dl}, nil
}

// subject is the dead-letter stream subject of the DLQ ref names, which
// must be listed (brokers/nats decides which are); otherwise the answer
// is dlqreplay.ErrUnknownDLQ.
func (b *Backend) subject(ctx context.Context, c *conn, ref dlqreplay.Ref) (string, error) {
	s, err := b.opts.Cluster.DLQSubject(ctx, c.js, c.dl, ref.Name)
	if errors.Is(err, brokernats.ErrUnknownDLQ) {
		return "", unknownDLQ{err}
	}
	return s, err
}

// unknownDLQ is brokers/nats' unknown DLQ as the pipeline knows it.
type unknownDLQ struct{ error }

func (e unknownDLQ) Unwrap() error { return e.error }

func (e unknownDLQ) Is(target error) bool { return target == dlqreplay.ErrUnknownDLQ }

// next reads the first copy at or after seq on filter; nil at the end.
func (c *conn) next(ctx context.Context, filter string, seq uint64) (*jetstream.RawStreamMsg, error) {
	raw, err := c.dl.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(filter))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read dead letters %s from #%d: %w", filter, seq, err)
	}
	return raw, nil
}

// Browse reads a page by sequence; After is the sequence to start at.
func (b *Backend) Browse(ctx context.Context, ref dlqreplay.Ref, opts dlqreplay.BrowseOptions) (dlqreplay.Page, error) {
	seq := uint64(1)
	if opts.After != "" {
		n, err := strconv.ParseUint(opts.After, 10, 64)
		if err != nil || n == 0 {
			return dlqreplay.Page{}, fmt.Errorf("after %q: want a sequence: %w", opts.After, dlqreplay.ErrInvalidRequest)
		}
		seq = n
	}
	c, err := b.connect(ctx, "dlq browse")
	if err != nil {
		return dlqreplay.Page{}, err
	}
	defer c.nc.Close()
	filter, err := b.subject(ctx, c, ref)
	if err != nil {
		return dlqreplay.Page{}, err
	}
	var page dlqreplay.Page
	for len(page.Messages) < opts.Limit {
		raw, err := c.next(ctx, filter, seq)
		if err != nil {
			return dlqreplay.Page{}, err
		}
		if raw == nil {
			return page, nil
		}
		page.Messages = append(page.Messages, brokernats.DecodeDeadLetter(raw).Message)
		seq = raw.Sequence + 1
	}
	if raw, err := c.next(ctx, filter, seq); err == nil && raw != nil {
		page.Next = strconv.FormatUint(seq, 10)
	}
	return page, nil
}

// route is a session's destination: a subject, whose tokens are neither
// wildcards nor empty (".", "a..b": the server refuses those outright).
func route(subject string) (dlqreplay.Route, error) {
	if subject == "" || strings.ContainsAny(subject, "*> \t\r\n") || slices.Contains(strings.Split(subject, "."), "") {
		return dlqreplay.Route{}, fmt.Errorf("subject %q cannot be published to: %w", subject, dlqreplay.ErrInvalidRequest)
	}
	return dlqreplay.Route{Target: subject, Dest: subject}, nil
}

// namedRoute is the route of a move or restore to a named subject: a
// user's subject, not JetStream's own ($KV, $JS: a lease could be forged)
// nor the dead-letter stream's copies.
func (b *Backend) namedRoute(subject string) (dlqreplay.Route, error) {
	if strings.HasPrefix(subject, "$") || strings.HasPrefix(subject, b.opts.Cluster.DeadLetterStream()+".") {
		return dlqreplay.Route{}, fmt.Errorf("subject %q is queuewatch's or JetStream's own, not a move or restore target: %w", subject, dlqreplay.ErrInvalidRequest)
	}
	return route(subject)
}

// checkSubject tells whether a stream stores subject: a publish to a
// subject no stream stores is acknowledged by nobody.
func checkSubject(ctx context.Context, js jetstream.JetStream, subject string) error {
	_, err := js.StreamNameBySubject(ctx, subject)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("no stream stores subject %q: %w", subject, dlqreplay.ErrTargetMissing)
	}
	if err != nil {
		return fmt.Errorf("find the stream of subject %q: %w", subject, err)
	}
	return nil
}

// Restore publishes archived messages to the subject target.Name and
// returns the ones the target stream acknowledged; the target passes the
// same check as a move's (namedRoute, checkSubject). Each carries
// Nats-Msg-Id "qw-restore:<restore id>", the archive row's random id, so a
// restore retried within the stream's duplicate window stores each
// message once, while another row — from this store or another
// instance's — never shares the id. An ack that says Duplicate stored
// nothing new and is returned as such. One connection serves all of
// msgs; each is published once pace allowed it.
func (b *Backend) Restore(ctx context.Context, target dlqreplay.Ref, msgs []dlqreplay.Archived, h dlqreplay.RestoreHooks) error {
	r, err := b.namedRoute(target.Name)
	if err != nil {
		return err
	}
	nc, js, err := b.opts.Cluster.Connect(ctx, "dlq restore")
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := checkSubject(ctx, js, r.Target); err != nil {
		return err
	}
	for _, a := range msgs {
		if err := h.Pace(ctx); err != nil {
			return err
		}
		m := nats.NewMsg(r.Target)
		for _, h := range a.Headers {
			if !brokernats.IsCaptureHeader(h.Key) && !strings.HasPrefix(h.Key, "Nats-") {
				m.Header.Add(h.Key, string(h.Value))
			}
		}
		m.Header.Set(jetstream.MsgIDHeader, restoreMsgID(a))
		m.Data = a.Body
		ack, err := js.PublishMsg(ctx, m)
		if err != nil {
			return fmt.Errorf("restore message %s: %w", a.MessageID, err)
		}
		h.Answered(dlqreplay.Restored{ID: a.ID, Duplicate: ack.Duplicate})
	}
	return nil
}

// restoreMsgID is a restored copy's Nats-Msg-Id.
func restoreMsgID(a dlqreplay.Archived) string { return "qw-restore:" + a.RestoreID }
