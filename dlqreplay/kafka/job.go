package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

const metaPrefix = "queuewatch-job:"

// execution is one prepared Kafka job.
type execution struct {
	b      *Backend
	run    *dlqreplay.Run
	txnID  string
	spans  []span
	tx     *kgo.Client
	topics map[string]error // checked targets

	// Per partition: the cursor to commit, and whether an unhandled record
	// stopped it.
	cursor  map[int32]int64
	blocked map[int32]bool

	batch   []*pending
	archive []*queue.Message
	seq     int
	inTxn   bool
	done    map[string]bool // records earlier jobs sent
	topicID [16]byte
}

// pending is a record sent (or archived) in the open batch.
type pending struct {
	out    dlqreplay.Outcome
	part   int32
	offset int64
	// advance: no unhandled record preceded this one in its partition
	// when it was read, so the cursor may move past it.
	advance bool
	err     error
}

// Prepare snapshots the cursor and end offsets, checks a named target and
// refuses when another instance's transaction on this DLQ is open.
func (b *Backend) Prepare(ctx context.Context, run *dlqreplay.Run) (dlqreplay.Execution, error) {
	e := &execution{b: b, run: run, txnID: "queuewatch-dlqreplay-" + b.Cluster() + "-" + run.DLQ.Name,
		topics: map[string]error{}, cursor: map[int32]int64{}, blocked: map[int32]bool{}}
	spans, meta, err := b.spans(ctx, run.DLQ.Name)
	if err != nil {
		return nil, err
	}
	e.spans = spans
	td, err := b.adm.ListTopics(ctx, run.DLQ.Name)
	if err != nil {
		return nil, fmt.Errorf("describe topic %s: %w", run.DLQ.Name, err)
	}
	e.topicID = td[run.DLQ.Name].ID
	if err := e.checkLock(ctx, meta); err != nil {
		return nil, err
	}
	if run.Action != dlqreplay.ActionDelete && run.Target.Kind == dlqreplay.TargetNamed {
		if err := e.checkTarget(ctx, run.Target.Name); err != nil {
			return nil, err
		}
	}
	if e.done, err = run.Done(ctx, nil); err != nil {
		return nil, err
	}
	var depth int64
	for _, s := range spans {
		depth += max(s.end-s.from, 0)
		e.cursor[s.partition] = s.from
	}
	if !run.DryRun && run.Action != dlqreplay.ActionDelete {
		e.tx, err = b.opts.Cluster.NewClient(
			kgo.TransactionalID(e.txnID), kgo.TransactionTimeout(b.opts.TransactionTimeout),
			kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchMaxBytes(32<<20))
		if err != nil {
			return nil, fmt.Errorf("create transactional producer: %w", err)
		}
	}
	run.SetDepth(depth)
	return e, nil
}

// checkLock refuses when a transaction of this DLQ's transactional ID is
// open: another instance is replaying it.
func (e *execution) checkLock(ctx context.Context, meta string) error {
	txns, err := e.b.adm.DescribeTransactions(ctx, e.txnID)
	if err != nil {
		// Brokers without the API (or without the ID yet) still fence.
		return nil
	}
	if t, ok := txns[e.txnID]; ok && t.Err == nil && t.State == "Ongoing" {
		id, _ := strings.CutPrefix(meta, metaPrefix)
		return &dlqreplay.ConflictError{DLQ: e.run.DLQ.ID(), JobID: id}
	}
	return nil
}

func (e *execution) checkTarget(ctx context.Context, topic string) error {
	if err, ok := e.topics[topic]; ok {
		return err
	}
	err := e.b.checkTopic(ctx, topic)
	e.topics[topic] = err
	return err
}

// Close releases the producer.
func (e *execution) Close() error {
	if e.tx != nil {
		e.tx.Close()
	}
	return nil
}

// Execute reads the snapshot and moves selected records in transactions.
func (e *execution) Execute(ctx context.Context) error {
	var jobErr error
	err := e.b.read(ctx, e.run.DLQ.Name, e.spans, 2*time.Second, func(r *kgo.Record) bool {
		if jobErr = e.handle(ctx, r); jobErr != nil {
			return false
		}
		if len(e.batch)+len(e.archive) >= e.b.opts.BatchSize {
			jobErr = e.commit(ctx)
		}
		return jobErr == nil && !e.run.Satisfied()
	})
	if jobErr == nil {
		jobErr = err
	}
	if jobErr != nil && !errors.Is(jobErr, context.Canceled) {
		e.abort(ctx, jobErr)
		return jobErr
	}
	// A cancel still commits what is in flight: it was produced.
	if err := e.commit(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	return jobErr
}

func (e *execution) handle(ctx context.Context, r *kgo.Record) error {
	m := message(r)
	if !e.run.Selection.Match(&m) || !e.run.Selected() {
		e.blocked[r.Partition] = true
		return nil
	}
	out := dlqreplay.Outcome{MessageID: m.ID, Source: m.Death.Source()}
	if max := e.run.MaxReplays; max > 0 && replayCount(r) >= int64(max) {
		out.Result, out.Reason = dlqreplay.ResultSkipped, fmt.Sprintf("poison: replayed %d times (max_replays %d)", replayCount(r), max)
		e.run.Report(out)
		e.blocked[r.Partition] = true
		return nil
	}
	if e.done[m.ID] {
		// Reported with the batch, so the cursor never passes a record
		// of the batch that is still in flight.
		out.Result, out.Reason = dlqreplay.ResultSkipped, "already sent by an earlier job"
		e.batch = append(e.batch, &pending{out: out, part: r.Partition, offset: r.Offset, advance: !e.blocked[r.Partition]})
		return nil
	}
	if e.run.Action == dlqreplay.ActionDelete {
		if e.run.DryRun {
			out.Result = dlqreplay.ResultWouldDelete
			e.run.Report(out)
			return nil
		}
		out.Result = dlqreplay.ResultDeleted
		e.archive = append(e.archive, &m)
		e.batch = append(e.batch, &pending{out: out, part: r.Partition, offset: r.Offset, advance: !e.blocked[r.Partition]})
		return nil
	}
	topic := e.target(&m)
	out.Target = topic
	if topic == "" {
		out.Result, out.Reason = dlqreplay.ResultFailed, "no original topic in the headers and no DLQ suffix to strip"
		e.run.Report(out)
		e.blocked[r.Partition] = true
		return nil
	}
	if err := e.checkTarget(ctx, topic); err != nil {
		out.Result, out.Reason = dlqreplay.ResultFailed, err.Error()
		e.run.Report(out)
		e.blocked[r.Partition] = true
		return err
	}
	if e.run.DryRun {
		out.Result = dlqreplay.ResultWouldMove
		e.run.Report(out)
		return nil
	}
	if err := e.run.Wait(ctx); err != nil {
		return err
	}
	if !e.inTxn {
		if err := e.tx.BeginTransaction(); err != nil {
			return fmt.Errorf("begin transaction: %w", err)
		}
		e.inTxn = true
	}
	out.Result = dlqreplay.ResultMoved
	p := &pending{out: out, part: r.Partition, offset: r.Offset, advance: !e.blocked[r.Partition]}
	e.batch = append(e.batch, p)
	e.seq++
	e.tx.Produce(ctx, e.copyOf(r, topic, e.seq), func(_ *kgo.Record, err error) { p.err = err })
	return nil
}

func (e *execution) target(m *queue.Message) string {
	if e.run.Target.Kind == dlqreplay.TargetNamed {
		return e.run.Target.Name
	}
	if m.Death.OriginalTopic != "" {
		return m.Death.OriginalTopic
	}
	return e.b.opts.SourceTopic(e.run.DLQ.Name)
}

// copyOf is the replayed record: same key, value and headers, the replay
// count bumped and the replay id set.
func (e *execution) copyOf(r *kgo.Record, topic string, n int) *kgo.Record {
	c := &kgo.Record{Topic: topic, Key: r.Key, Value: r.Value}
	for _, h := range r.Headers {
		if h.Key != HeaderReplayCount && h.Key != HeaderReplayID {
			c.Headers = append(c.Headers, h)
		}
	}
	c.Headers = append(c.Headers,
		kgo.RecordHeader{Key: HeaderReplayCount, Value: []byte(strconv.FormatInt(replayCount(r)+1, 10))},
		kgo.RecordHeader{Key: HeaderReplayID, Value: []byte(e.run.ID + "." + strconv.Itoa(n))})
	return c
}

// advanceBatch moves cursors past the batch's records that no unhandled
// record preceded.
func (e *execution) advanceBatch(batch []*pending) {
	for _, p := range batch {
		if p.advance && p.offset+1 > e.cursor[p.part] {
			e.cursor[p.part] = p.offset + 1
		}
	}
}

// commit ends the open batch: deletes are archived and the cursor
// committed; replays flush, commit the cursor inside the transaction and
// commit it. Outcomes are reported only after that.
func (e *execution) commit(ctx context.Context) error {
	if len(e.batch) == 0 {
		return nil
	}
	batch := e.batch
	e.batch = nil
	if !e.inTxn {
		arch := e.archive
		e.archive = nil
		if len(arch) > 0 {
			if err := e.run.Archive(ctx, arch); err != nil {
				e.fail(batch, err)
				return err
			}
		}
		e.advanceBatch(batch)
		err := e.commitPlain(ctx)
		for _, p := range batch {
			if err != nil {
				p.out.PossibleDuplicate, p.out.Reason = true, "archived; cursor commit failed: "+err.Error()
			}
			e.run.Report(p.out)
		}
		return err
	}
	e.inTxn = false
	if err := e.tx.Flush(ctx); err != nil {
		e.abortBatch(ctx, batch, err)
		return err
	}
	for _, p := range batch {
		if p.err != nil {
			e.abortBatch(ctx, batch, p.err)
			return fmt.Errorf("produce to %s: %w", p.out.Target, p.err)
		}
	}
	saved := maps(e.cursor)
	e.advanceBatch(batch)
	if err := e.commitInTxn(ctx); err != nil {
		e.cursor = saved
		e.abortBatch(ctx, batch, err)
		return err
	}
	if err := e.tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		e.cursor = saved
		// The outcome of a failed EndTxn is unknown: copies may be visible.
		for _, p := range batch {
			p.out.Result, p.out.Reason, p.out.PossibleDuplicate = dlqreplay.ResultFailed, "commit transaction: "+err.Error(), true
			e.run.Report(p.out)
		}
		return fmt.Errorf("commit transaction: %w", err)
	}
	for _, p := range batch {
		e.run.Report(p.out)
	}
	return nil
}

func maps(m map[int32]int64) map[int32]int64 {
	out := make(map[int32]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (e *execution) fail(batch []*pending, err error) {
	for _, p := range batch {
		p.out.Result, p.out.Reason = dlqreplay.ResultFailed, err.Error()
		e.run.Report(p.out)
	}
}

func (e *execution) abortBatch(ctx context.Context, batch []*pending, err error) {
	if aerr := e.tx.AbortBufferedRecords(ctx); aerr == nil {
		_ = e.tx.EndTransaction(ctx, kgo.TryAbort)
	}
	e.fail(batch, err)
}

func (e *execution) abort(ctx context.Context, err error) {
	if len(e.batch) == 0 {
		return
	}
	batch := e.batch
	e.batch, e.archive = nil, nil
	if e.tx != nil {
		e.abortBatch(context.WithoutCancel(ctx), batch, err)
		return
	}
	e.fail(batch, err)
}

// offsets is the cursor as commit requests want it.
func (e *execution) offsets() map[int32]int64 {
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
func (e *execution) commitInTxn(ctx context.Context) error {
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
	t.Topic, t.TopicID = e.run.DLQ.Name, e.topicID
	meta := metaPrefix + e.run.ID
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
func (e *execution) commitPlain(ctx context.Context) error {
	offs := e.offsets()
	if len(offs) == 0 {
		return nil
	}
	return e.b.commitCursor(ctx, e.run.DLQ.Name, metaPrefix+e.run.ID, offs)
}
