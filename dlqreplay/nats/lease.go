package nats

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	brokernats "github.com/queuewatch/queuewatch/brokers/nats"
	"github.com/queuewatch/queuewatch/dlqreplay"
)

// lease is a job's hold on a DLQ: a key in the lease bucket whose value is
// the job ID. The bucket's TTL removes a key nobody renews.
type lease struct {
	kv  jetstream.KeyValue
	key string
	val []byte

	mu   sync.Mutex
	rev  uint64
	lost error

	stop chan struct{}
	done chan struct{}
}

// leaseBucket is the key-value bucket of a cluster's leases.
func (b *Backend) leaseBucket() string { return b.opts.Cluster.LeaseBucket() }

// acquire takes the DLQ's lease for job, or answers a *ConflictError
// naming the job that holds it.
func (b *Backend) acquire(ctx context.Context, js jetstream.JetStream, job dlqreplay.JobSpec) (*lease, error) {
	kv, err := js.KeyValue(ctx, b.leaseBucket())
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      b.leaseBucket(),
			Description: "queuewatch: one replay job per dead-letter queue",
			TTL:         b.opts.LeaseTTL,
			Storage:     jetstream.FileStorage,
		})
	}
	if err != nil {
		return nil, fmt.Errorf("lease bucket %s: %w", b.leaseBucket(), err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("lease bucket %s: %w", b.leaseBucket(), err)
	}
	ttl := st.TTL()
	if ttl <= 0 {
		return nil, fmt.Errorf("lease bucket %s has no TTL: a crashed job would hold its dlq forever", b.leaseBucket())
	}
	// Key characters are restricted; DLQ names are not. The key is the
	// consumer's: an older queuewatch named a DLQ "orders" (every stream's)
	// and took this key for it, so during an upgrade its job and one on
	// "ORDERS.orders", which reach the same copies, still exclude each
	// other. Consumers of one name in two streams share a lease.
	l := &lease{
		kv: kv, key: "dlq." + hex.EncodeToString([]byte(brokernats.DLQConsumer(job.DLQ.Name))), val: []byte(job.ID),
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	l.rev, err = kv.Create(ctx, l.key, l.val)
	if errors.Is(err, jetstream.ErrKeyExists) {
		holder := ""
		if e, gerr := kv.Get(ctx, l.key); gerr == nil {
			holder = string(e.Value())
		}
		return nil, &dlqreplay.ConflictError{DLQ: job.DLQ.ID(), JobID: holder}
	}
	if err != nil {
		return nil, fmt.Errorf("take the dlq's lease: %w", err)
	}
	go l.renew(ttl / 3)
	return l, nil
}

// renew updates the key every interval until released; a failed update
// (the lease expired and another job took it, or the server is gone)
// marks the lease lost.
func (l *lease) renew(every time.Duration) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if err := l.renewOnce(every); err != nil {
			return
		}
	}
}

// renewOnce updates the key once. The mutex guards only the state, not
// the network call: the job asks err() before every message and must not
// wait behind a slow server.
func (l *lease) renewOnce(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	l.mu.Lock()
	prev := l.rev
	l.mu.Unlock()
	rev, err := l.kv.Update(ctx, l.key, l.val, prev)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.lost = fmt.Errorf("renew the dlq's lease: %w", err)
		return l.lost
	}
	l.rev = rev
	return nil
}

// err is non-nil once the lease may be held by someone else.
func (l *lease) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// release stops renewing and deletes the key if it is still this job's.
func (l *lease) release(ctx context.Context) error {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	lost, rev := l.lost, l.rev
	l.mu.Unlock()
	if lost != nil {
		return nil
	}
	if err := l.kv.Delete(ctx, l.key, jetstream.LastRevision(rev)); err != nil {
		return fmt.Errorf("release the dlq's lease: %w", err)
	}
	return nil
}

// abandon stops renewing and leaves the key to expire: the connection it
// would be deleted over is gone.
func (l *lease) abandon() {
	close(l.stop)
	<-l.done
}
