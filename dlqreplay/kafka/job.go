package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// session is the Kafka side of one job (a dlqreplay.Session).
type session struct {
	b      *Backend
	job    dlqreplay.JobSpec
	txnID  string
	spans  []span
	depth  int64
	tx     *kgo.Client
	topics map[string]error // checked targets

	// Per partition: the cursor to commit, and whether a kept record
	// stopped it.
	cursor  map[int32]int64
	blocked map[int32]bool

	batch   []*pending
	inTxn   bool
	renewed time.Time // when the lease was last renewed
	unsure  bool      // a commit's outcome is unknown
	topicID [16]byte
}

// pending is a record sent or removed in the open batch.
type pending struct {
	d      *dlqreplay.Delivery
	part   int32
	offset int64
	// advance: no kept record preceded this one in its partition when it
	// was read, so the cursor may move past it.
	advance bool
	err     error
}

func record(d *dlqreplay.Delivery) *kgo.Record { return d.Handle.(*kgo.Record) }

// Open snapshots the cursor and end offsets, refuses when another
// instance's job holds the DLQ (its transaction is open or its lease has
// not run out), and takes the lease itself unless it is a dry run, which
// changes nothing at the broker.
func (b *Backend) Open(ctx context.Context, job dlqreplay.JobSpec) (dlqreplay.Session, error) {
	e := &session{
		b: b, job: job, txnID: "queuewatch-dlqreplay-" + b.Cluster() + "-" + job.DLQ.Name,
		topics: map[string]error{}, cursor: map[int32]int64{}, blocked: map[int32]bool{},
	}
	spans, held, err := b.spans(ctx, job.DLQ.Name)
	if err != nil {
		return nil, err
	}
	e.spans = spans
	td, err := b.adm.ListTopics(ctx, job.DLQ.Name)
	if err != nil {
		return nil, fmt.Errorf("describe topic %s: %w", job.DLQ.Name, err)
	}
	e.topicID = td[job.DLQ.Name].ID
	if err := e.checkLock(ctx, held); err != nil {
		return nil, err
	}
	for _, s := range spans {
		e.depth += max(s.end-s.from, 0)
		e.cursor[s.partition] = s.from
	}
	if !job.DryRun {
		if err := e.renew(ctx); err != nil {
			return nil, fmt.Errorf("take the dlq's lease: %w", err)
		}
	}
	if job.Publishes() {
		e.tx, err = b.opts.Cluster.NewClient(
			kgo.TransactionalID(e.txnID), kgo.TransactionTimeout(b.opts.TransactionTimeout),
			kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchMaxBytes(32<<20))
		if err != nil {
			return nil, fmt.Errorf("create transactional producer: %w", err)
		}
	}
	return e, nil
}

// Depth is the number of records between the cursor and the end offsets
// at Open.
func (e *session) Depth() int64 { return e.depth }

// KeepsHandled is true: a topic is a log, and records stay readable until
// the cursor passes them.
func (e *session) KeepsHandled() bool { return true }

// checkLock refuses when another job holds the DLQ: its lease has not
// run out, or a transaction of this DLQ's transactional ID is open.
func (e *session) checkLock(ctx context.Context, held lease) error {
	conflict := &dlqreplay.ConflictError{DLQ: e.job.DLQ.ID(), JobID: held.job}
	if held.held(time.Now()) {
		return conflict
	}
	txns, err := e.b.adm.DescribeTransactions(ctx, e.txnID)
	if err != nil {
		// Brokers without the API (or without the ID yet) still fence.
		return nil
	}
	if t, ok := txns[e.txnID]; ok && t.Err == nil && t.State == "Ongoing" {
		return conflict
	}
	return nil
}

// lease is the job's lease, valid for one transaction timeout from now.
func (e *session) lease() lease {
	return lease{job: e.job.ID, until: time.Now().Add(e.b.opts.TransactionTimeout)}
}

// renew commits the cursor where it stands on every partition with a
// fresh lease.
func (e *session) renew(ctx context.Context) error {
	e.renewed = time.Now()
	return e.b.commitCursor(ctx, e.job.DLQ.Name, e.lease().String(), maps.Clone(e.cursor))
}

// release ends the lease, unless a commit's outcome is unknown: then the
// cursor this session knows may be behind the broker's, and committing it
// would move the cursor back; the lease runs out by itself instead.
func (e *session) release(ctx context.Context) {
	if e.job.DryRun || e.unsure {
		return
	}
	l := lease{job: e.job.ID}
	if err := e.b.commitCursor(ctx, e.job.DLQ.Name, l.String(), maps.Clone(e.cursor)); err != nil {
		e.b.opts.Logger.Warn("release the dlq's lease; it runs out by itself", "dlq", e.job.DLQ.ID(), "err", err)
	}
}

// CheckRoute makes sure the target topic exists.
func (e *session) CheckRoute(ctx context.Context, r dlqreplay.Route) error {
	return e.b.checkTopic(ctx, r.Target)
}

// Close aborts a transaction left open, releases the producer and the
// lease.
func (e *session) Close(ctx context.Context) error {
	if e.tx != nil {
		if e.inTxn {
			e.abortTxn(ctx)
		}
		e.tx.Close()
	}
	e.release(ctx)
	return nil
}

// Scan reads the snapshot, partition by partition in offset order.
func (e *session) Scan(ctx context.Context, each func(*dlqreplay.Delivery) error) error {
	var eachErr error
	err := e.b.read(ctx, e.job.DLQ.Name, e.spans, 2*time.Second, func(r *kgo.Record) bool {
		eachErr = each(&dlqreplay.Delivery{Message: message(r), Handle: r})
		return eachErr == nil
	})
	if eachErr != nil {
		return eachErr
	}
	return err
}

// Route is a named topic, the original topic from the dead-letter
// headers, or the DLQ's name without its suffix (orders.DLT → orders).
func (e *session) Route(m *queue.Message, t dlqreplay.Target) (dlqreplay.Route, error) {
	topic := t.Name
	if t.Kind != dlqreplay.TargetNamed {
		topic = m.Death.OriginalTopic
		if topic == "" {
			topic = e.b.opts.SourceTopic(e.job.DLQ.Name)
		}
	}
	if topic == "" {
		return dlqreplay.Route{}, errors.New("no original topic in the headers and no DLQ suffix to strip")
	}
	return dlqreplay.Route{Target: topic}, nil
}

// Keep stops the cursor of the record's partition: it never passes a
// record still in the DLQ.
func (e *session) Keep(d *dlqreplay.Delivery) error {
	e.blocked[record(d).Partition] = true
	return nil
}

// Publish produces the copy inside the job's open transaction.
func (e *session) Publish(ctx context.Context, d *dlqreplay.Delivery, r dlqreplay.Route, rp dlqreplay.Replay) error {
	if !e.inTxn {
		if err := e.tx.BeginTransaction(); err != nil {
			return fmt.Errorf("begin transaction: %w", err)
		}
		e.inTxn = true
	}
	p := e.add(d)
	// A cancel stops the job taking messages, not the copies already on
	// their way: those are settled like any other.
	e.tx.Produce(context.WithoutCancel(ctx), copyOf(record(d), r.Target, rp), func(_ *kgo.Record, err error) { p.err = err })
	return nil
}

// Remove moves the cursor past the record with the batch.
func (e *session) Remove(_ context.Context, d *dlqreplay.Delivery) error {
	e.add(d)
	return nil
}

func (e *session) add(d *dlqreplay.Delivery) *pending {
	r := record(d)
	p := &pending{d: d, part: r.Partition, offset: r.Offset, advance: !e.blocked[r.Partition]}
	e.batch = append(e.batch, p)
	return p
}

// Settle commits the open batch once it holds BatchSize records (or for
// SettleDue and SettleAll, or when half a transaction timeout passed since
// the last commit): the copies and the cursor in one transaction, or the
// cursor alone for removed records.
func (e *session) Settle(ctx context.Context, mode dlqreplay.SettleMode) ([]dlqreplay.Settled, error) {
	// A slow job commits before its transaction or its lease could run
	// out, whatever the batch size.
	due := mode != dlqreplay.SettleBatch || time.Since(e.renewed) >= e.b.opts.TransactionTimeout/2
	if len(e.batch) == 0 || (!due && len(e.batch) < e.b.opts.BatchSize) {
		return nil, nil
	}
	batch := e.batch
	e.batch = nil
	if !e.inTxn {
		return e.commitRemoved(ctx, batch)
	}
	return e.commitTxn(ctx, batch)
}

// copyOf is the replayed record: same key, value and headers, the replay
// count and id set to rp's.
func copyOf(r *kgo.Record, topic string, rp dlqreplay.Replay) *kgo.Record {
	c := &kgo.Record{Topic: topic, Key: r.Key, Value: r.Value}
	for _, h := range r.Headers {
		if h.Key != HeaderReplayCount && h.Key != HeaderReplayID {
			c.Headers = append(c.Headers, h)
		}
	}
	c.Headers = append(c.Headers,
		kgo.RecordHeader{Key: HeaderReplayCount, Value: []byte(queue.FormatReplayCount(rp.Count))},
		kgo.RecordHeader{Key: HeaderReplayID, Value: []byte(rp.ID)})
	return c
}

// advanceBatch moves cursors past the batch's records that no unhandled
// record preceded.
func (e *session) advanceBatch(batch []*pending) {
	for _, p := range batch {
		if p.advance && p.offset+1 > e.cursor[p.part] {
			e.cursor[p.part] = p.offset + 1
		}
	}
}

// commitRemoved commits the cursor past removed records (archived, or
// sent by an earlier job); a failed commit leaves them readable, so they
// are possible duplicates.
func (e *session) commitRemoved(ctx context.Context, batch []*pending) ([]dlqreplay.Settled, error) {
	e.advanceBatch(batch)
	err := e.commitPlain(ctx)
	e.unsure = e.unsure || err != nil
	out := make([]dlqreplay.Settled, len(batch))
	for i, p := range batch {
		out[i] = dlqreplay.Settled{Delivery: p.d}
		if err != nil {
			out[i].PossibleDuplicate, out[i].Note = true, "archived; cursor commit failed: "+err.Error()
		}
	}
	return out, err
}

// commitTxn flushes the batch's copies, commits the cursor inside the
// transaction and commits it; any failure aborts it all.
func (e *session) commitTxn(ctx context.Context, batch []*pending) ([]dlqreplay.Settled, error) {
	e.inTxn = false
	if err := e.tx.Flush(ctx); err != nil {
		return e.abortBatch(ctx, batch, err), err
	}
	for _, p := range batch {
		if p.err != nil {
			err := fmt.Errorf("produce to %s: %w", p.d.Message.ID, p.err)
			return e.abortBatch(ctx, batch, p.err), err
		}
	}
	saved := maps.Clone(e.cursor)
	e.advanceBatch(batch)
	if err := e.commitInTxn(ctx); err != nil {
		e.cursor = saved
		return e.abortBatch(ctx, batch, err), err
	}
	err := e.tx.EndTransaction(ctx, kgo.TryCommit)
	if err == nil {
		return failed(batch, nil), nil
	}
	e.cursor = saved
	// A broker's definitive refusal means nothing was committed; any
	// other failure (a lost response, a retriable error that outlived
	// retries) leaves the outcome unknown, so the copies may be visible.
	// The abort is franz-go's recovery either way: it frees the DLQ now
	// rather than after the transaction timeout.
	uncertain := !refused(err)
	e.unsure = e.unsure || uncertain
	e.endAbort(ctx) // the commit error is the one to report
	e.keepBatch(batch)
	err = fmt.Errorf("commit transaction: %w", err)
	out := failed(batch, err)
	for i := range out {
		out[i].PossibleDuplicate = uncertain
	}
	return out, err
}

// refused reports a definitive answer from the broker: a non-retriable
// Kafka error other than UNKNOWN_SERVER_ERROR.
func refused(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke) && !ke.Retriable && ke.Code != kerr.UnknownServerError.Code
}

// failed settles the batch with err (nil: every record made it).
func failed(batch []*pending, err error) []dlqreplay.Settled {
	out := make([]dlqreplay.Settled, len(batch))
	for i, p := range batch {
		out[i] = dlqreplay.Settled{Delivery: p.d, Err: err}
	}
	return out
}

func (e *session) abortBatch(ctx context.Context, batch []*pending, err error) []dlqreplay.Settled {
	e.abortTxn(ctx)
	e.keepBatch(batch)
	return failed(batch, err)
}

// keepBatch stops the cursors at a failed batch's records: they stay in
// the DLQ, and no later commit may move the cursor past them.
func (e *session) keepBatch(batch []*pending) {
	for _, p := range batch {
		e.blocked[p.part] = true
	}
}

func (e *session) abortTxn(ctx context.Context) {
	e.inTxn = false
	ctx, cancel := abortContext(ctx, e.b.opts.TransactionTimeout)
	defer cancel()
	if aerr := e.tx.AbortBufferedRecords(ctx); aerr == nil {
		_ = e.tx.EndTransaction(ctx, kgo.TryAbort)
	}
}

// endAbort ends the open transaction with an abort.
func (e *session) endAbort(ctx context.Context) {
	ctx, cancel := abortContext(ctx, e.b.opts.TransactionTimeout)
	defer cancel()
	_ = e.tx.EndTransaction(ctx, kgo.TryAbort)
}

// abortContext is ctx for an abort: not cancelled with the job, since a
// batch settled as failed when its job was cancelled (its flush cut short)
// must not stay in an open transaction, which the job's last commit would
// then commit (copies the receipt says were not sent); bounded by the
// transaction timeout, after which the broker aborts it anyway.
func abortContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), timeout)
}

// offsets is the cursor as commit requests want it.
func (e *session) offsets() map[int32]int64 {
	out := map[int32]int64{}
	for _, s := range e.spans {
		if c := e.cursor[s.partition]; c > s.from {
			out[s.partition] = c
		}
	}
	return out
}

// commitInTxn adds the cursor group to the open transaction and commits
// the cursor in it.
func (e *session) commitInTxn(ctx context.Context) error {
	offs := e.offsets()
	if len(offs) == 0 {
		return nil
	}
	id, epoch, err := e.tx.ProducerID(ctx)
	if err != nil {
		return fmt.Errorf("producer id: %w", err)
	}
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = e.txnID, id, epoch, e.b.opts.Cluster.CursorGroup()
	aresp, err := add.RequestWith(ctx, e.tx)
	if err != nil {
		return fmt.Errorf("add cursor to transaction: %w", err)
	}
	if err := kerr.ErrorForCode(aresp.ErrorCode); err != nil {
		return fmt.Errorf("add cursor to transaction: %w", err)
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = e.txnID, e.b.opts.Cluster.CursorGroup(), id, epoch
	req.Generation, req.MemberID = -1, ""
	t := kmsg.NewTxnOffsetCommitRequestTopic()
	// v6+ names topics by ID, older versions by name; both are set.
	t.Topic, t.TopicID = e.job.DLQ.Name, e.topicID
	meta := e.lease().String()
	e.renewed = time.Now()
	for p, o := range offs {
		pp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		pp.Partition, pp.Offset, pp.LeaderEpoch, pp.Metadata = p, o, -1, &meta
		t.Partitions = append(t.Partitions, pp)
	}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, e.tx)
	if err != nil {
		return fmt.Errorf("commit cursor in transaction: %w", err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				return fmt.Errorf("commit cursor %s/%d in transaction: %w", rt.Topic, rp.Partition, err)
			}
		}
	}
	return nil
}

// commitPlain commits the cursor outside a transaction (deletes, and
// cursor moves over records earlier jobs sent).
func (e *session) commitPlain(ctx context.Context) error {
	offs := e.offsets()
	if len(offs) == 0 {
		return nil
	}
	e.renewed = time.Now()
	return e.b.commitCursor(ctx, e.job.DLQ.Name, e.lease().String(), offs)
}
