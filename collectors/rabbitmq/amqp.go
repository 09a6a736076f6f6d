package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
)

// errBusy is returned when the previous poll's AMQP work on a vhost has not
// finished yet (it was cancelled and its connection is being torn down).
var errBusy = errors.New("previous amqp operation still running")

// probe asks for one queue's exact depth. It never reads a message: on a
// quorum queue every return of a read message counts as a delivery, and
// RabbitMQ 4 drops or dead-letters a message after 20 of them by default.
type probe struct {
	queue string
}

// probeResult is what a probe learned.
type probeResult struct {
	ready     int64
	consumers int
	missing   bool // the queue does not exist
	err       error
}

// amqpPool keeps one long-lived AMQP connection per vhost.
type amqpPool struct {
	cluster *rabbit.Cluster
	log     *slog.Logger

	mu     sync.Mutex
	vhosts map[string]*vhostConn
	closed bool

	dials atomic.Int64 // successful dials, for tests
}

// vhostConn is one vhost's connection and channel. work is held by the one
// goroutine using the connection; mu guards the fields, which the close
// watcher and a cancelled poll also touch.
type vhostConn struct {
	work sync.Mutex

	mu   sync.Mutex
	conn *amqp.Connection
	ch   *amqp.Channel
	raw  net.Conn
	// dialing is closed when the dial in progress ends, nil when none is;
	// dialErr is why the last dial failed, nil after one succeeded.
	dialing chan struct{}
	dialErr error
}

func newAMQPPool(cluster *rabbit.Cluster, log *slog.Logger) *amqpPool {
	return &amqpPool{cluster: cluster, log: log, vhosts: map[string]*vhostConn{}}
}

func (p *amqpPool) vhost(name string) (*vhostConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("source closed")
	}
	vc, ok := p.vhosts[name]
	if !ok {
		vc = &vhostConn{}
		p.vhosts[name] = vc
	}
	return vc, nil
}

// close closes every connection.
func (p *amqpPool) close() {
	p.mu.Lock()
	p.closed = true
	vcs := p.vhosts
	p.vhosts = map[string]*vhostConn{}
	p.mu.Unlock()
	for _, vc := range vcs {
		vc.drop()
	}
}

// isClosed reports whether the pool was closed: a connection dropped then is
// shutting down, not failing, and is not worth a warning.
func (p *amqpPool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// drop closes the connection under any operation using it, so that the
// operation fails at once instead of waiting for a heartbeat timeout.
func (vc *vhostConn) drop() {
	vc.mu.Lock()
	raw, conn := vc.raw, vc.conn
	vc.conn, vc.ch, vc.raw = nil, nil, nil
	vc.mu.Unlock()
	if raw != nil {
		_ = raw.Close() // the connection is being dropped either way
	}
	if conn != nil {
		// The socket is gone, so this only releases the client's state.
		go conn.Close()
	}
}

// run probes the queues of vhost in order. It returns when done or as soon
// as ctx ends; in the latter case the connection is dropped so the work
// stops, and the results are discarded.
func (p *amqpPool) run(ctx context.Context, vhost string, probes []probe) ([]probeResult, error) {
	vc, err := p.vhost(vhost)
	if err != nil {
		return nil, err
	}
	if !vc.work.TryLock() {
		return nil, errBusy
	}
	done := make(chan struct{})
	var res []probeResult
	go func() {
		defer vc.work.Unlock()
		defer close(done)
		res, err = p.probeAll(ctx, vc, vhost, probes)
	}()
	select {
	case <-done:
		return res, err
	case <-ctx.Done():
		vc.drop()
		if err := vc.refusal(); err != nil {
			return nil, err
		}
		return nil, ctx.Err()
	}
}

// refusal is the last dial's error when the broker refused the login: a
// poll that ends while the next dial waits for the broker reports it
// rather than its own deadline.
func (vc *vhostConn) refusal() error {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if rabbit.IsAccessRefused(vc.dialErr) {
		return vc.dialErr
	}
	return nil
}

func (p *amqpPool) probeAll(ctx context.Context, vc *vhostConn, vhost string, probes []probe) ([]probeResult, error) {
	out := make([]probeResult, len(probes))
	for i, pr := range probes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := p.probeOne(ctx, vc, vhost, pr)
		if err != nil {
			// The connection died since the last poll without the close
			// watcher noticing yet: dial once more before giving up.
			vc.drop()
			r, err = p.probeOne(ctx, vc, vhost, pr)
		}
		if err != nil {
			vc.drop()
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// probeOne returns an error only for connection-level failures; queue-level
// ones are in the result.
func (p *amqpPool) probeOne(ctx context.Context, vc *vhostConn, vhost string, pr probe) (probeResult, error) {
	ch, conn, err := p.channel(ctx, vc, vhost)
	if err != nil {
		return probeResult{}, err
	}
	q, err := ch.QueueDeclarePassive(pr.queue, false, false, false, false, nil)
	if err != nil {
		if conn.IsClosed() {
			return probeResult{}, err
		}
		// The broker closed the channel (404 for a deleted queue, 405 for
		// another connection's exclusive queue); the next probe reopens it.
		vc.clearChannel(ch)
		if rabbit.IsNotFound(err) {
			return probeResult{missing: true}, nil
		}
		return probeResult{err: err}, nil
	}
	return probeResult{ready: int64(q.Messages), consumers: q.Consumers}, nil
}

func (vc *vhostConn) clearChannel(ch *amqp.Channel) {
	vc.mu.Lock()
	if vc.ch == ch {
		vc.ch = nil
	}
	vc.mu.Unlock()
	go ch.Close()
}

// channel returns the vhost's open channel, dialling and opening as needed.
func (p *amqpPool) channel(ctx context.Context, vc *vhostConn, vhost string) (*amqp.Channel, *amqp.Connection, error) {
	vc.mu.Lock()
	conn, ch := vc.conn, vc.ch
	vc.mu.Unlock()
	if conn == nil || conn.IsClosed() {
		var err error
		if conn, err = p.dial(ctx, vc, vhost); err != nil {
			return nil, nil, err
		}
		ch = nil
	}
	if ch != nil && !ch.IsClosed() {
		return ch, conn, nil
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, nil, fmt.Errorf("open channel: %w", err)
	}
	vc.mu.Lock()
	vc.ch = ch
	vc.mu.Unlock()
	return ch, conn, nil
}

// dial connects to vhost, waiting until ctx ends. The dial itself runs on
// in the background, bounded by the cluster's DialTimeout (or ctx, when
// later) rather than by the poll: RabbitMQ answers a wrong password only
// after 3 s, so a short poll would otherwise never learn why it cannot
// connect. A later poll shares a dial in progress and uses its connection
// or its refusal; when that dial failed otherwise (a network blip since
// gone), it dials once more itself. A watcher forgets the connection when
// the broker closes it, so the next poll dials again instead of retrying in
// the background against a broker that is down.
func (p *amqpPool) dial(ctx context.Context, vc *vhostConn, vhost string) (*amqp.Connection, error) {
	for attempt := 0; ; attempt++ {
		done, mine := p.startDial(ctx, vc, vhost)
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		conn, err := vc.dialed()
		if err != nil && !mine && attempt == 0 && !rabbit.IsAccessRefused(err) {
			continue
		}
		return conn, err
	}
}

// startDial returns the channel closed when vc's dial in progress ends,
// starting one when none is, and whether it started it.
func (p *amqpPool) startDial(ctx context.Context, vc *vhostConn, vhost string) (<-chan struct{}, bool) {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if vc.dialing != nil {
		return vc.dialing, false
	}
	timeout := p.cluster.DialTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) > timeout {
		timeout = time.Until(dl)
	}
	done := make(chan struct{})
	vc.dialing = done
	go p.dialOnce(vc, vhost, timeout, done)
	return done, true
}

// dialed is the outcome of the last dial.
func (vc *vhostConn) dialed() (*amqp.Connection, error) {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	switch {
	case vc.dialErr != nil:
		return nil, vc.dialErr
	case vc.conn == nil:
		return nil, errors.New("amqp connection closed right after it opened")
	}
	return vc.conn, nil
}

// dialOnce dials vhost and records the connection or the error in vc,
// then closes done.
func (p *amqpPool) dialOnce(vc *vhostConn, vhost string, timeout time.Duration, done chan struct{}) {
	defer close(done)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, raw, err := p.cluster.DialSocket(ctx, vhost, "queuewatch "+p.cluster.Name()+" "+vhost)
	if err == nil && p.isClosed() {
		_ = raw.Close() // the source closed while dialling: nobody uses this connection
		go conn.Close()
		err = errors.New("source closed")
	}
	vc.mu.Lock()
	vc.dialing, vc.dialErr = nil, err
	if err == nil {
		vc.conn, vc.ch, vc.raw = conn, nil, raw
	}
	vc.mu.Unlock()
	if err != nil {
		return
	}
	p.dials.Add(1)
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	go func() {
		if e := <-closed; e != nil && !p.isClosed() {
			p.log.Warn("amqp connection closed", "vhost", vhost, "err", e)
		}
		vc.mu.Lock()
		if vc.conn == conn {
			vc.conn, vc.ch, vc.raw = nil, nil, nil
		}
		vc.mu.Unlock()
	}()
}
