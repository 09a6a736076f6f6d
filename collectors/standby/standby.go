// Package standby lets replicas of one shard share the polling of every
// source through a shared store (the PostgreSQL audit store): per source,
// the replica holding a lease polls the broker and stores its snapshot;
// the others — standbys — serve that snapshot, without touching the
// broker and without exporting its series, and take the lease over once
// it expires. Two replicas then cost the brokers what one does and page
// once, and a standby takes over within one lease TTL of the owner's last
// poll.
package standby

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/queue"
)

// Store keeps the poll leases and the holders' snapshots
// (store.Store on PostgreSQL).
type Store interface {
	// LeasePoll takes or renews holder's lease on source until now+ttl
	// unless another's runs, and returns the holder after the call.
	LeasePoll(ctx context.Context, source, holder string, now time.Time, ttl time.Duration) (string, error)
	// PutPollSnapshot stores holder's snapshot while it holds the lease.
	PutPollSnapshot(ctx context.Context, source, holder string, snapshot []byte) error
	// PollSnapshot returns the lease's holder and the last stored snapshot.
	PollSnapshot(ctx context.Context, source string) (holder string, snapshot []byte, err error)
	// ReleasePoll ends holder's lease at once.
	ReleasePoll(ctx context.Context, source, holder string) error
}

// Source polls its inner source while it holds the source's lease, and
// otherwise serves the holder's last snapshot. While it holds the lease
// it renews it on a timer of its own, not only when it polls: a replica
// whose polls fail backs off (up to minutes), and the lease must not pass
// to a standby whose polls fail alike, or the source's series would hop
// between replicas and an alert's `for:` start over with each hop.
type Source struct {
	inner  collectors.Source
	store  Store
	holder string
	ttl    time.Duration
	log    *slog.Logger
	stop   chan struct{}
	once   sync.Once

	mu       sync.Mutex
	owner    bool      // this replica holds the lease (as of its last call)
	polledBy string    // the holder whose snapshot the last Poll served
	served   time.Time // Time of the newest snapshot returned, own or mirrored
}

// Wrap makes src share its polling through store as replica holder. ttl is
// how long a lease stays good unrenewed; the holder renews it every third
// of it. Release stops that.
func Wrap(src collectors.Source, store Store, holder string, ttl time.Duration, log *slog.Logger) *Source {
	s := &Source{inner: src, store: store, holder: holder, ttl: ttl, log: log, stop: make(chan struct{})}
	go s.keep()
	return s
}

// Broker is the inner source's broker.
func (s *Source) Broker() queue.Broker { return s.inner.Broker() }

// Cluster is the inner source's cluster.
func (s *Source) Cluster() string { return s.inner.Cluster() }

// key names the source in the store: the broker and the cluster, as the
// shards hash it.
func (s *Source) key() string { return string(s.Broker()) + "/" + s.Cluster() }

// Poll polls the broker when this replica holds (or takes) the lease, and
// otherwise returns the holder's stored snapshot, or
// collectors.ErrNothingNewer when it has none newer than the last served.
func (s *Source) Poll(ctx context.Context) (*queue.Snapshot, error) {
	sctx, cancel := storeContext(ctx)
	holder, err := s.store.LeasePoll(sctx, s.key(), s.holder, time.Now(), s.ttl)
	cancel()
	if err != nil {
		// Without the store no replica can tell who polls: poll the broker
		// rather than go blind. Until it is back each replica polls.
		s.log.Warn("poll lease unavailable; polling the broker", "err", err)
		return s.poll(ctx, false)
	}
	if holder == s.holder {
		return s.poll(ctx, true)
	}
	return s.mirror(ctx)
}

// storeContext bounds a call to the store to a third of what is left of
// the poll, so that a slow store leaves time to poll the broker.
func storeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok {
		return context.WithTimeout(ctx, time.Until(d)/3)
	}
	return context.WithTimeout(ctx, 5*time.Second)
}

// poll polls the broker and, when this replica holds the lease, stores
// what came of it for the standbys: the snapshot, or why there is none.
func (s *Source) poll(ctx context.Context, leased bool) (*queue.Snapshot, error) {
	s.setRole(true, "")
	start := time.Now()
	snap, err := s.inner.Poll(ctx)
	rec := Record{At: start, Err: errText(err)}
	if err == nil {
		rec.At, rec.Snapshot = snap.Time, snap
	}
	s.mu.Lock()
	s.served = rec.At // a standby's stored copy of it is not newer
	s.mu.Unlock()
	if leased {
		s.share(ctx, rec)
	}
	return snap, err
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// share stores rec for the standbys. A failure to is logged: they serve
// an older poll for as long; this replica's is fine.
func (s *Source) share(ctx context.Context, rec Record) {
	data, err := Encode(rec)
	if err == nil {
		sctx, cancel := storeContext(context.WithoutCancel(ctx))
		err = s.store.PutPollSnapshot(sctx, s.key(), s.holder, data)
		cancel()
	}
	if err != nil {
		s.log.Warn("store the poll for the standbys", "err", err)
	}
}

// mirror returns the holder's stored poll: its snapshot, marked as polled
// by the holder, or its failure, as this replica's.
func (s *Source) mirror(ctx context.Context) (*queue.Snapshot, error) {
	holder, data, err := s.store.PollSnapshot(ctx, s.key())
	if err != nil {
		return nil, err
	}
	s.setRole(false, holder)
	if data == nil {
		return nil, collectors.ErrNothingNewer
	}
	rec, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("poll stored by %s: %w", holder, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !rec.At.After(s.served) {
		return nil, collectors.ErrNothingNewer
	}
	s.served = rec.At
	if rec.Snapshot == nil {
		return nil, fmt.Errorf("%s (polled by replica %s)", rec.Err, holder)
	}
	rec.Snapshot.PolledBy = holder
	return rec.Snapshot, nil
}

func (s *Source) setRole(owner bool, polledBy string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.owner, s.polledBy = owner, polledBy
}

// PolledBy is the replica whose snapshots this one serves, "" while it
// polls the broker itself (collectors.Mirror).
func (s *Source) PolledBy() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.polledBy
}

// keep renews the lease every third of the TTL while this replica holds
// it, until Release.
func (s *Source) keep() {
	t := time.NewTicker(s.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		owner := s.owner
		s.mu.Unlock()
		if !owner {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.ttl/3)
		holder, err := s.store.LeasePoll(ctx, s.key(), s.holder, time.Now(), s.ttl)
		cancel()
		if err != nil {
			s.log.Warn("renew the poll lease", "err", err)
		} else if holder != s.holder {
			s.setRole(false, holder) // taken over after a lapse: the next poll mirrors
		}
	}
}

// Finish completes what the last poll left pending (collectors.Finisher)
// when this replica polled the broker; a standby has nothing to finish.
func (s *Source) Finish(ctx context.Context) bool {
	s.mu.Lock()
	owner := s.owner
	s.mu.Unlock()
	f, ok := s.inner.(collectors.Finisher)
	return owner && ok && f.Finish(ctx)
}

// Reread re-reads queues after a job (collectors.Rereader) when this
// replica polls the broker: its next poll stores the result for the
// standbys. A standby re-reads nothing; the owner's next read shows the
// job.
func (s *Source) Reread(ctx context.Context, names []string, job string) (bool, error) {
	s.mu.Lock()
	owner := s.owner
	s.mu.Unlock()
	r, ok := s.inner.(collectors.Rereader)
	if !owner || !ok {
		return false, nil
	}
	return r.Reread(ctx, names, job)
}

// Release stops renewing and gives the lease up, so that a standby takes
// over at its next poll rather than after the TTL: what a replica does
// once it stopped polling.
func (s *Source) Release(ctx context.Context) error {
	s.once.Do(func() { close(s.stop) })
	return s.store.ReleasePoll(ctx, s.key(), s.holder)
}

// Record is one poll as the holder stores it for the standbys: its
// snapshot, or the error that left it without one.
type Record struct {
	At       time.Time       // the snapshot's time, or when the failed poll started
	Snapshot *queue.Snapshot `json:",omitempty"`
	Err      string          `json:",omitempty"`
}

// Encode is a record as the store keeps it: gzipped JSON. A snapshot of
// 100k group-partitions is some megabytes of JSON and a tenth of that
// gzipped.
func Encode(rec Record) ([]byte, error) {
	if rec.Snapshot != nil {
		c := *rec.Snapshot
		c.Err, c.PolledBy = nil, "" // a stored snapshot is a good poll's
		rec.Snapshot = &c
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if err := json.NewEncoder(zw).Encode(&rec); err != nil {
		return nil, fmt.Errorf("encode poll: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("encode poll: %w", err)
	}
	return b.Bytes(), nil
}

// Decode reads a record Encode made.
func Decode(data []byte) (Record, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return Record{}, fmt.Errorf("decode poll: %w", err)
	}
	var rec Record
	if err := json.NewDecoder(io.LimitReader(zr, maxSnapshot)).Decode(&rec); err != nil {
		return Record{}, fmt.Errorf("decode poll: %w", err)
	}
	if rec.Snapshot == nil && rec.Err == "" {
		return Record{}, errors.New("decode poll: neither a snapshot nor an error")
	}
	return rec, nil
}

// maxSnapshot bounds a decoded snapshot: 1M group-partitions' JSON is
// about 300 MB; a larger one is a corrupt row, not a cluster.
const maxSnapshot = 1 << 30
