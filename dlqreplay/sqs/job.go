package sqs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	brokersqs "github.com/queuewatch/queuewatch/brokers/sqs"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// ioTimeout bounds one send or delete. A cancelled job still finishes the
// message in hand, so these calls do not take the job's cancel.
const ioTimeout = 20 * time.Second

// renewWorkers is how many ChangeMessageVisibilityBatch calls of one
// renewal run at once: a job holding many kept messages renews them all
// well within the visibility timeout.
const renewWorkers = 8

// heldLimit is the most messages a job holds in flight: SQS refuses to
// receive beyond queue.SQSInFlightLimit per queue (standard queues), and
// a consumer of the queue may hold some too.
const heldLimit = queue.SQSInFlightLimit - 10_000

// entry is one received message the session holds until it is deleted or
// given back.
type entry struct {
	m       types.Message
	d       *dlqreplay.Delivery
	sentTo  string // the target a copy was sent to, "" when none
	deleted bool
}

// session is the SQS side of one job (a dlqreplay.Session).
type session struct {
	b     *Backend
	job   dlqreplay.JobSpec
	q     *dlq
	depth int64
	read  int64
	urls  map[string]string // target queue URLs by name

	// io orders visibility changes against deletes: a renewal of a chunk
	// holds it shared, a DeleteMessageBatch exclusively, so no renewal
	// names a message deleted meanwhile (SQS would refuse it, and the job
	// would be failed for it).
	io sync.RWMutex

	mu    sync.Mutex
	held  []*entry // received and not deleted, in receive order
	lost  error    // set once a renewal failed: the messages may be visible
	limit int      // the most messages held at once (heldLimit)

	pending []*entry // sent or to remove: deleted by the next flush
	settled []dlqreplay.Settled
	stop    error

	done    chan struct{}
	stopped chan struct{}
}

// Open finds the DLQ, refuses it while messages are in flight in it
// (another job holds them, or a consumer) and snapshots its depth.
func (b *Backend) Open(ctx context.Context, job dlqreplay.JobSpec) (dlqreplay.Session, error) {
	q, err := b.lookup(ctx, job.DLQ)
	if err != nil {
		return nil, err
	}
	if q.count("ApproximateNumberOfMessagesNotVisible") > 0 {
		return nil, &dlqreplay.ConflictError{DLQ: job.DLQ.ID()}
	}
	s := &session{
		b: b, job: job, q: q, depth: q.count("ApproximateNumberOfMessages"), urls: map[string]string{}, limit: heldLimit,
		done: make(chan struct{}), stopped: make(chan struct{}),
	}
	go s.renew(b.opts.VisibilityTimeout / 3)
	return s, nil
}

// Depth is the DLQ's visible messages at Open.
func (s *session) Depth() int64 { return s.depth }

// KeepsHandled is false: a handled message is deleted.
func (s *session) KeepsHandled() bool { return false }

// Scan receives the snapshot ten at a time. It receives the next batch
// before handing over the last message of the current one, so the job
// always holds messages in flight (what a second job's Open sees). A FIFO
// DLQ is not read ahead: SQS gives nothing more of a message group while
// one of its messages is in flight, so each batch is settled first, and a
// group with a kept message cannot be read past it (an error: the rest
// stays for another job).
func (s *session) Scan(ctx context.Context, each func(*dlqreplay.Delivery) error) error {
	fifo := brokersqs.IsFIFO(s.q.name)
	next, err := s.fetch(ctx)
	for len(next) > 0 && err == nil {
		cur := next
		next = nil
		for i, e := range cur {
			if i == len(cur)-1 && !fifo {
				if next, err = s.fetch(ctx); err != nil {
					return err
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			// A dry run never publishes or removes: it learns of a failed
			// renewal here (the messages may be received twice).
			if err := s.lostErr(); err != nil {
				return err
			}
			if err := each(e.d); err != nil {
				return err
			}
		}
		if fifo {
			next, err = s.fetch(ctx)
		}
	}
	if err == nil && fifo && s.read < s.depth {
		err = fmt.Errorf("read %d of the %d messages: SQS holds back a FIFO group while one of its messages is in flight, and this job keeps some; the rest stays in the dlq", s.read, s.depth)
	}
	return err
}

// fetch receives the next batch of the snapshot, nil once it was read.
func (s *session) fetch(ctx context.Context) ([]*entry, error) {
	if s.read >= s.depth {
		return nil, nil
	}
	n := int(min(batchSize, s.depth-s.read))
	s.mu.Lock()
	held := len(s.held)
	s.mu.Unlock()
	if held+n > s.limit {
		return nil, fmt.Errorf("stopped after reading %d of the %d messages: this job holds %d messages in flight (not selected, or a dry run), and SQS allows at most %d in flight per queue; every held message is given back; narrow the selection or replay in parts",
			s.read, s.depth, held, queue.SQSInFlightLimit)
	}
	ms, err := s.b.receive(ctx, s.q.url, n, s.b.opts.VisibilityTimeout)
	if err != nil {
		return nil, err
	}
	out := make([]*entry, len(ms))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range ms {
		e := &entry{m: m}
		e.d = &dlqreplay.Delivery{Message: s.q.message(m, s.read, s.b.own.of(aws.ToString(m.MessageId))), Handle: e}
		s.read++
		out[i] = e
		s.held = append(s.held, e)
	}
	return out, nil
}

// renew extends the visibility of the held messages every interval until
// Close.
func (s *session) renew(every time.Duration) {
	defer close(s.stopped)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		s.renewOnce(every)
	}
}

// renewOnce extends the visibility of the held messages once, ten per
// call, renewWorkers calls at a time, each call with its own timeout
// (every): a job holding many kept messages renews them all. A failure
// marks the session lost.
func (s *session) renewOnce(every time.Duration) {
	s.mu.Lock()
	held := slices.Clone(s.held)
	s.mu.Unlock()
	var (
		wg    sync.WaitGroup
		errMu sync.Mutex
		first error
		fails int
	)
	sem := make(chan struct{}, renewWorkers)
loop:
	for chunk := range slices.Chunk(held, batchSize) {
		select {
		case <-s.done:
			break loop
		case sem <- struct{}{}:
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := s.renewChunk(chunk, every); err != nil {
				errMu.Lock()
				if first == nil {
					first = err
				}
				fails++
				errMu.Unlock()
			}
		}()
	}
	wg.Wait()
	if first != nil {
		s.mu.Lock()
		s.lost = fmt.Errorf("renew the visibility of the held messages (%d of %d calls failed): %w", fails, (len(held)+batchSize-1)/batchSize, first)
		s.mu.Unlock()
	}
}

// renewChunk extends the visibility of the messages of chunk not deleted
// meanwhile; no delete runs while it does.
func (s *session) renewChunk(chunk []*entry, timeout time.Duration) error {
	s.io.RLock()
	defer s.io.RUnlock()
	s.mu.Lock()
	handles := make([]string, 0, len(chunk))
	for _, e := range chunk {
		if !e.deleted {
			handles = append(handles, aws.ToString(e.m.ReceiptHandle))
		}
	}
	s.mu.Unlock()
	if len(handles) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.b.setVisibility(ctx, s.q.url, handles, s.b.opts.VisibilityTimeout)
}

// lostErr is why the held messages may be visible to others, nil while
// every renewal succeeded.
func (s *session) lostErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

// handles are the receipt handles of the held messages, in order.
func (s *session) handles() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.held {
		if !e.deleted {
			out = append(out, aws.ToString(e.m.ReceiptHandle))
		}
	}
	return out
}

func handle(d *dlqreplay.Delivery) *entry { return d.Handle.(*entry) }

// Route sends a replay to the message's source queue, a move to the
// named queue.
func (s *session) Route(m *queue.Message, t dlqreplay.Target) (dlqreplay.Route, error) {
	switch t.Kind {
	case dlqreplay.TargetNamed:
		if t.Name == "" || t.Name == s.q.name {
			return dlqreplay.Route{}, fmt.Errorf("queue %q cannot be a move target: %w", t.Name, dlqreplay.ErrInvalidRequest)
		}
		return dlqreplay.Route{Target: t.Name, Dest: t.Name}, nil
	case dlqreplay.TargetOriginalExchange:
		return dlqreplay.Route{}, fmt.Errorf("sqs has no exchanges; replay to the source queue or a named one: %w", dlqreplay.ErrInvalidRequest)
	}
	src := m.Death.Source()
	if src == "" {
		return dlqreplay.Route{}, errors.New("no DeadLetterQueueSourceArn and several source queues: the source is unknown")
	}
	return dlqreplay.Route{Target: src, Dest: src}, nil
}

// CheckRoute reports ErrTargetMissing when the target queue does not
// exist.
func (s *session) CheckRoute(ctx context.Context, r dlqreplay.Route) error {
	url, err := s.b.queueURL(ctx, r.Target)
	if err == nil {
		s.urls[r.Target] = url
	}
	return err
}

// Keep does nothing yet: a kept message stays hidden until Close gives
// every kept one back in order (given back now, it would be received
// again by this scan).
func (s *session) Keep(*dlqreplay.Delivery) error { return nil }

// held refuses to go on once the job stopped or the messages may be
// visible to others.
func (s *session) check() error {
	if s.stop != nil {
		return s.stop
	}
	return s.lostErr()
}

// replayAttributes are the message's attributes with the replay stamps
// set; a message that would carry more than SQS allows is an error.
func replayAttributes(m types.Message, rp dlqreplay.Replay) (map[string]types.MessageAttributeValue, error) {
	out := make(map[string]types.MessageAttributeValue, len(m.MessageAttributes)+2)
	for k, v := range m.MessageAttributes {
		out[k] = v
	}
	out[queue.HeaderReplayCount] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(queue.FormatReplayCount(rp.Count))}
	out[queue.HeaderReplayID] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(rp.ID)}
	if len(out) > maxAttributes {
		return nil, fmt.Errorf("the copy would carry %d message attributes with the replay stamps, SQS allows %d: kept in the dlq, none dropped", len(out), maxAttributes)
	}
	return out, nil
}

// Publish sends the copy; its DLQ original is deleted by a later flush.
func (s *session) Publish(ctx context.Context, d *dlqreplay.Delivery, r dlqreplay.Route, rp dlqreplay.Replay) error {
	if err := s.check(); err != nil {
		return err
	}
	e := handle(d)
	attrs, err := replayAttributes(e.m, rp)
	if err != nil {
		s.settled = append(s.settled, dlqreplay.Settled{Delivery: d, Err: err})
		return nil
	}
	in := &sdk.SendMessageInput{QueueUrl: aws.String(s.urls[r.Target]), MessageBody: e.m.Body, MessageAttributes: attrs}
	if brokersqs.IsFIFO(r.Target) {
		in.MessageGroupId = aws.String(groupID(e.m.Attributes))
		in.MessageDeduplicationId = aws.String(dedupID(s.job.ID, aws.ToString(e.m.MessageId)))
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ioTimeout)
	defer cancel()
	// One attempt: an answer from SQS then means nothing was stored, while
	// after a retry it could be the answer to a copy an earlier attempt
	// stored unconfirmed. A cut connection or a timeout may have stored it.
	if _, err := s.b.c.SendMessage(ctx, in, func(o *sdk.Options) { o.RetryMaxAttempts = 1 }); err != nil {
		err = fmt.Errorf("send to %s: %w", r.Target, err)
		s.settled = append(s.settled, dlqreplay.Settled{Delivery: d, Err: err, PossibleDuplicate: !refused(err)})
		s.stop = err
		return nil
	}
	e.sentTo = r.Target
	s.pending = append(s.pending, e)
	return nil
}

// Remove deletes the message (archived by a delete job) at the next flush.
func (s *session) Remove(_ context.Context, d *dlqreplay.Delivery) error {
	if err := s.check(); err != nil {
		return err
	}
	s.pending = append(s.pending, handle(d))
	return nil
}

// Settle deletes the pending messages from the DLQ once there are ten of
// them (or all of them for SettleDue and SettleAll, so a slow job never
// leaves a sent message's original in the DLQ for long) and reports
// their fate.
func (s *session) Settle(ctx context.Context, mode dlqreplay.SettleMode) ([]dlqreplay.Settled, error) {
	// A FIFO DLQ deletes at once: a message in flight holds its group.
	if len(s.pending) >= batchSize || (mode != dlqreplay.SettleBatch || brokersqs.IsFIFO(s.q.name)) && len(s.pending) > 0 {
		s.flush(ctx)
	}
	out := s.settled
	s.settled = nil
	return out, s.stop
}

// flush deletes the pending messages, ten per DeleteMessageBatch.
func (s *session) flush(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ioTimeout)
	defer cancel()
	for len(s.pending) > 0 {
		n := min(batchSize, len(s.pending))
		chunk := s.pending[:n]
		s.pending = s.pending[n:]
		failed := s.delete(ctx, chunk)
		for i, e := range chunk {
			st := dlqreplay.Settled{Delivery: e.d}
			if err := failed[i]; err != nil {
				if e.sentTo != "" {
					st.PossibleDuplicate, st.Note = true, "copy sent to "+e.sentTo+"; not deleted from the dlq: "+err.Error()
				} else {
					st.Err = err
				}
				s.stop = err
			}
			s.settled = append(s.settled, st)
		}
	}
}

// delete deletes chunk from the DLQ and returns each entry's error.
func (s *session) delete(ctx context.Context, chunk []*entry) []error {
	errs := make([]error, len(chunk))
	entries := make([]types.DeleteMessageBatchRequestEntry, len(chunk))
	for i, e := range chunk {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: e.m.ReceiptHandle}
	}
	s.io.Lock()
	defer s.io.Unlock()
	out, err := s.b.c.DeleteMessageBatch(ctx, &sdk.DeleteMessageBatchInput{QueueUrl: aws.String(s.q.url), Entries: entries})
	if err != nil {
		for i := range errs {
			errs[i] = fmt.Errorf("delete from %s: %w", s.q.name, err)
		}
		return errs
	}
	for _, f := range out.Failed {
		if i, err := strconv.Atoi(aws.ToString(f.Id)); err == nil && i < len(errs) {
			errs[i] = fmt.Errorf("delete from %s: %s: %s", s.q.name, aws.ToString(f.Code), aws.ToString(f.Message))
		}
	}
	// The oldest message the receives saw may be among the deleted ones:
	// the estimate of the DLQ's oldest age is learnt again by the next
	// receive.
	s.b.opts.Cluster.ForgetSent(s.q.name)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range chunk {
		e.deleted = errs[i] == nil
	}
	// A deleted message is held no longer: a long job keeps only the
	// messages in flight, and renews only those.
	s.held = slices.DeleteFunc(s.held, func(e *entry) bool { return e.deleted })
	return errs
}

// Close stops renewing and makes every held message visible again, in the
// order it was received. A queue is ordered by when a message became
// visible, so when the scan stopped early with messages kept, the rest of
// the snapshot is received first and given back after them: the DLQ keeps
// its order. Close never fails the job: a message it cannot give back is
// visible again once its visibility timeout runs out.
func (s *session) Close(ctx context.Context) error {
	close(s.done)
	<-s.stopped
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	if len(s.handles()) > 0 {
		for {
			batch, err := s.fetch(ctx)
			if err != nil || len(batch) == 0 {
				break
			}
		}
	}
	if err := s.b.giveBack(ctx, s.q.url, s.handles()); err != nil {
		s.b.opts.Logger.Warn("kept messages not made visible again; they are back after the visibility timeout",
			"cluster", s.b.Cluster(), "dlq", s.job.DLQ.ID(), "job", s.job.ID, "err", err)
	}
	return nil
}
