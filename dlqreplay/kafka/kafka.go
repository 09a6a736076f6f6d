// Package kafka browses Kafka dead-letter topics and replays, moves and
// deletes their records without losing any.
//
// A DLQ topic is a log: records are never removed, so "in the DLQ" means
// past the replay cursor, the committed offsets of the cursor group
// (config dlq.kafka_cursor_group, default queuewatch-dlq), which is also
// what the collector measures DLQ depth against: both take it, and the
// connection, from the same brokers/kafka access value. Browsing fetches from the
// cursor with a consumer that belongs to no group, so it changes nothing.
//
// A job reads from the cursor up to the end offsets seen at its start and
// produces selected records (same key, value and headers, plus
// x-queuewatch-replay-count and x-queuewatch-replay-id) with a
// transactional, idempotent, acks=all producer. The cursor advance is
// committed in the same transaction (AddOffsetsToTxn + TxnOffsetCommit), so
// the copies and the cursor move together or not at all; read_committed
// consumers never see a copy whose cursor move was lost. The cursor is a
// per-partition offset, so it only advances over a prefix of handled
// records: an unselected, poison or failed record stops it. Records sent
// past such a stop are recorded in the audit store and skipped (not sent
// again) by later jobs, which then move the cursor over them.
//
// The transactional ID is fixed per DLQ topic, so two instances running a
// job on one DLQ fence each other at the broker; before starting, a job
// also looks for an ongoing transaction of that ID and refuses with
// dlqreplay.ErrJobRunning, naming the job recorded in the cursor's commit
// metadata.
package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/queue"
)

// Headers queuewatch adds to every replayed copy (decimal text values);
// the names live in queue.
const (
	HeaderReplayCount = queue.HeaderReplayCount
	HeaderReplayID    = queue.HeaderReplayID
)

// Options configure a Backend.
type Options struct {
	// Cluster is the access to the cluster (connection, cursor group),
	// shared with its collector.
	Cluster *brokerkafka.Cluster
	// SourceTopic maps a DLQ topic to its original topic when the headers
	// do not name one (default brokerkafka.StripDLQSuffix: orders.DLT →
	// orders).
	SourceTopic func(dlq string) string
	// BatchSize is records per transaction (default 5000).
	BatchSize int
	// TransactionTimeout bounds one transaction (default 30s); it is also
	// how long a crashed job's DLQ stays locked.
	TransactionTimeout time.Duration
	Logger             *slog.Logger
}

// Backend is a dlqreplay.Backend for one Kafka cluster.
type Backend struct {
	opts Options
	cl   *kgo.Client
	adm  *kadm.Client
}

// New creates the Backend's admin client; Close releases it.
func New(opts Options) (*Backend, error) {
	if opts.Cluster == nil {
		return nil, errors.New("kafka backend: no cluster")
	}
	if opts.SourceTopic == nil {
		opts.SourceTopic = brokerkafka.StripDLQSuffix
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 5000
	}
	if opts.TransactionTimeout <= 0 {
		opts.TransactionTimeout = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	cl, err := opts.Cluster.NewClient()
	if err != nil {
		return nil, err
	}
	return &Backend{opts: opts, cl: cl, adm: kadm.NewClient(cl)}, nil
}

// Close closes the admin client.
func (b *Backend) Close() { b.cl.Close() }

// Broker is queue.Kafka.
func (b *Backend) Broker() queue.Broker { return queue.Kafka }

// Cluster is the configured cluster name.
func (b *Backend) Cluster() string { return b.opts.Cluster.Name() }

// span is one partition's unreplayed range [from, end).
type span struct {
	partition int32
	from, end int64
}

// spans reads where the cursor stands on every partition of topic and
// the end offsets, in partition order, with the cursor's commit metadata.
func (b *Backend) spans(ctx context.Context, topic string) ([]span, lease, error) {
	starts, err := b.adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, lease{}, fmt.Errorf("list start offsets of %s: %w", topic, err)
	}
	ends, err := b.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, lease{}, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	cursor, err := b.fetchCursor(ctx)
	if errors.Is(err, kerr.GroupIDNotFound) {
		// Nothing replayed yet: the cursor is the log start.
		cursor, err = kadm.OffsetResponses{}, nil
	}
	if err != nil {
		return nil, lease{}, fmt.Errorf("fetch cursor %s: %w", b.opts.Cluster.CursorGroup(), err)
	}
	if len(ends[topic]) == 0 {
		return nil, lease{}, fmt.Errorf("topic %q: %w", topic, dlqreplay.ErrUnknownDLQ)
	}
	var out []span
	var held lease
	var ferr error
	ends.Each(func(e kadm.ListedOffset) {
		switch {
		case errors.Is(e.Err, kerr.UnknownTopicOrPartition):
			// The broker answers for a missing topic with one error entry.
			ferr = fmt.Errorf("topic %q: %w", topic, dlqreplay.ErrUnknownDLQ)
			return
		case e.Err != nil:
			ferr = fmt.Errorf("end offset of %s/%d: %w", topic, e.Partition, e.Err)
			return
		}
		s := span{partition: e.Partition, end: e.Offset}
		if st, ok := starts.Lookup(topic, e.Partition); ok && st.Err == nil {
			s.from = st.Offset
		}
		c, ok := cursor.Lookup(topic, e.Partition)
		committed := ok && c.Err == nil
		s.from = brokerkafka.CursorPosition(s.from, c.At, committed)
		if committed && s.from == c.At {
			// The cursor stands at its commit, so the commit's lease counts.
			held = latest(held, parseLease(c.Metadata))
		}
		out = append(out, s)
	})
	if ferr != nil {
		return nil, lease{}, ferr
	}
	slices.SortFunc(out, func(a, b span) int { return int(a.partition - b.partition) })
	return out, held, nil
}

// fetchCursor reads the cursor group's commits. On a young cluster the
// group coordinator answers COORDINATOR_NOT_AVAILABLE while it creates
// __consumer_offsets (kfake answers at once, Apache Kafka does not), so a
// retriable error is retried for a few seconds within ctx.
func (b *Backend) fetchCursor(ctx context.Context) (kadm.OffsetResponses, error) {
	for wait := 100 * time.Millisecond; ; wait *= 2 {
		cursor, err := b.adm.FetchOffsets(ctx, b.opts.Cluster.CursorGroup())
		if !kerr.IsRetriable(err) || wait > 3*time.Second {
			return cursor, err
		}
		select {
		case <-ctx.Done():
			return cursor, err
		case <-time.After(wait):
		}
	}
}

// message decodes a record for display and selection.
func message(r *kgo.Record) queue.Message {
	m := queue.Message{
		ID:        strconv.Itoa(int(r.Partition)) + "@" + strconv.FormatInt(r.Offset, 10),
		Position:  r.Offset,
		Partition: r.Partition,
		Timestamp: r.Timestamp,
		Key:       r.Key,
		Body:      r.Value,
	}
	m.Headers = brokerkafka.Headers(r.Headers)
	m.Death = queue.DecodeDeath(m.Headers, nil)
	return m
}

// consumer reads partitions of topic from the given offsets, in no group.
func (b *Backend) consumer(topic string, from map[int32]int64) (*kgo.Client, error) {
	offs := map[int32]kgo.Offset{}
	for p, o := range from {
		offs[p] = kgo.NewOffset().At(o)
	}
	cl, err := b.opts.Cluster.NewClient(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offs}),
		kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(32<<20))
	if err != nil {
		return nil, fmt.Errorf("create consumer: %w", err)
	}
	return cl, nil
}

// read calls fn for the records of spans in offset order per partition,
// until every span is read or fn returns false. A span whose end is not
// reached within idle (transaction markers, aborted records) is done.
func (b *Backend) read(ctx context.Context, topic string, spans []span, idle time.Duration, fn func(*kgo.Record) bool) error {
	from, end := map[int32]int64{}, map[int32]int64{}
	for _, s := range spans {
		if s.from < s.end {
			from[s.partition], end[s.partition] = s.from, s.end
		}
	}
	if len(from) == 0 {
		return nil
	}
	cl, err := b.consumer(topic, from)
	if err != nil {
		return err
	}
	defer cl.Close()
	for len(end) > 0 {
		pctx, cancel := context.WithTimeout(ctx, idle)
		fs := cl.PollRecords(pctx, 10_000)
		cancel()
		if err := ctx.Err(); err != nil {
			return err
		}
		if fs.IsClientClosed() {
			return errors.New("consumer closed")
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				ferr = fmt.Errorf("fetch %s/%d: %w", t, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		if fs.NumRecords() == 0 {
			return nil
		}
		stop := false
		fs.EachRecord(func(r *kgo.Record) {
			e, ok := end[r.Partition]
			if stop || !ok || r.Offset >= e {
				return
			}
			if !fn(r) {
				stop = true
			}
			if r.Offset+1 >= e {
				delete(end, r.Partition)
			}
		})
		if stop {
			return nil
		}
	}
	return nil
}

// Browse reads a page from the cursor, partition by partition. After is
// "partition:offset", the previous page's Next.
func (b *Backend) Browse(ctx context.Context, ref dlqreplay.Ref, opts dlqreplay.BrowseOptions) (dlqreplay.Page, error) {
	spans, _, err := b.spans(ctx, ref.Name)
	if err != nil {
		return dlqreplay.Page{}, err
	}
	if opts.After != "" {
		ps, os, ok := strings.Cut(opts.After, ":")
		p, err1 := strconv.Atoi(ps)
		o, err2 := strconv.ParseInt(os, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return dlqreplay.Page{}, fmt.Errorf("after %q: want partition:offset: %w", opts.After, dlqreplay.ErrInvalidRequest)
		}
		for i := range spans {
			switch {
			case spans[i].partition < int32(p):
				spans[i].from = spans[i].end
			case spans[i].partition == int32(p):
				spans[i].from = max(spans[i].from, o)
			}
		}
	}
	var page dlqreplay.Page
	var last *kgo.Record
	for _, s := range spans {
		if len(page.Messages) >= opts.Limit {
			break
		}
		err := b.read(ctx, ref.Name, []span{s}, 2*time.Second, func(r *kgo.Record) bool {
			page.Messages = append(page.Messages, message(r))
			last = r
			return len(page.Messages) < opts.Limit
		})
		if err != nil {
			return dlqreplay.Page{}, err
		}
	}
	if last != nil && len(page.Messages) >= opts.Limit {
		page.Next = strconv.Itoa(int(last.Partition)) + ":" + strconv.FormatInt(last.Offset+1, 10)
	}
	return page, nil
}

// Restore produces archived records to the topic target.Name (acks=all,
// idempotent) and returns the ones that were acknowledged. Kafka drops a
// record as a duplicate only within one producer session's retries, never
// another producer's record, so every acknowledged record is a new copy.
// Each record is produced once pace allowed it.
func (b *Backend) Restore(ctx context.Context, target dlqreplay.Ref, msgs []dlqreplay.Archived, h dlqreplay.RestoreHooks) error {
	if err := b.checkTopic(ctx, target.Name); err != nil {
		return err
	}
	// Each record is produced once Pace allows it; the client batches and
	// retries them on its one connection per broker, and each is answered
	// as its acknowledgement comes.
	var mu sync.Mutex // Answered calls never overlap
	var wg sync.WaitGroup
	var first error
	for _, m := range msgs {
		if err := h.Pace(ctx); err != nil {
			wg.Wait()
			return cmp.Or(first, err)
		}
		r := &kgo.Record{Topic: target.Name, Key: m.Key, Value: m.Body}
		for _, hd := range m.Headers {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: hd.Key, Value: hd.Value})
		}
		wg.Add(1)
		b.cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				first = cmp.Or(first, err)
				return
			}
			h.Answered(dlqreplay.Restored{ID: m.ID})
		})
	}
	wg.Wait()
	return first
}

func (b *Backend) checkTopic(ctx context.Context, topic string) error {
	if !validTopic(topic) {
		return fmt.Errorf("topic %q: Kafka topic names are 1 to 249 of [a-zA-Z0-9._-]: %w", topic, dlqreplay.ErrInvalidRequest)
	}
	td, err := b.adm.ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("check topic %q: %w", topic, err)
	}
	if d, ok := td[topic]; !ok || d.Err != nil {
		return fmt.Errorf("topic %q: %w", topic, dlqreplay.ErrTargetMissing)
	}
	return nil
}

// validTopic follows Kafka's own rule (org.apache.kafka.common.internals.Topic),
// so a name the broker would refuse is the caller's mistake, not a missing topic.
func validTopic(t string) bool {
	if t == "" || len(t) > 249 || t == "." || t == ".." {
		return false
	}
	for _, c := range []byte(t) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// commitCursor commits the cursor group's offsets for topic outside a
// transaction; meta is the job's lease.
func (b *Backend) commitCursor(ctx context.Context, topic, meta string, offs map[int32]int64) error {
	var os kadm.Offsets
	for p, o := range offs {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1, Metadata: meta})
	}
	resp, err := b.adm.CommitOffsets(ctx, b.opts.Cluster.CursorGroup(), os)
	if err != nil {
		return fmt.Errorf("commit cursor %s: %w", b.opts.Cluster.CursorGroup(), err)
	}
	if err := resp.Error(); err != nil {
		return fmt.Errorf("commit cursor %s: %w", b.opts.Cluster.CursorGroup(), err)
	}
	return nil
}
