package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Reasons a publish did not make it, as they appear in receipts.
var (
	errReturned = errors.New("returned by the broker: unroutable")
	errNacked   = errors.New("nacked by the broker")
	errTimeout  = errors.New("no publisher confirm in time")
	errClosed   = errors.New("channel closed before the confirm")
)

// publisher publishes on a confirm-mode channel with mandatory set and
// tells, per publish, whether the broker confirmed it without returning
// it.
//
// Returns are correlated by the x-queuewatch-replay-id header (unique per
// publish). The broker sends basic.return before the basic.ack of the same
// publish and amqp091 hands both over from one reader goroutine in that
// order, so once a confirm is done its return, if any, is already in the
// returns channel. The channel's buffer is larger than the confirm window
// so the reader never blocks on it.
type publisher struct {
	ch       *amqp.Channel
	returns  chan amqp.Return
	returned map[string]amqp.Return
	inflight []inflight
	window   int
	timeout  time.Duration
}

type inflight struct {
	key string
	dc  *amqp.DeferredConfirmation
	at  time.Time
}

// settled is one publish's fate. uncertain means the copy may or may not
// be in the target (timeout, closed channel).
type settled struct {
	key       string
	err       error
	uncertain bool
}

func newPublisher(conn *amqp.Connection, window int, timeout time.Duration) (*publisher, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open publish channel: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		ch.Close()
		return nil, fmt.Errorf("enable publisher confirms: %w", err)
	}
	p := &publisher{
		ch: ch, returns: make(chan amqp.Return, window+64), returned: map[string]amqp.Return{},
		window: window, timeout: timeout,
	}
	ch.NotifyReturn(p.returns)
	return p, nil
}

// publish sends one message; key correlates a return with it and must be
// in its x-queuewatch-replay-id header when more than one publish is in
// flight.
func (p *publisher) publish(ctx context.Context, exchange, routingKey, key string, msg amqp.Publishing) error {
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, exchange, routingKey, true, false, msg)
	if err != nil {
		return fmt.Errorf("publish to %q/%q: %w", exchange, routingKey, err)
	}
	p.inflight = append(p.inflight, inflight{key: key, dc: dc, at: time.Now()})
	return nil
}

func (p *publisher) full() bool { return len(p.inflight) >= p.window }

// ready counts the oldest publishes whose confirms have arrived, without
// waiting.
func (p *publisher) ready() int {
	for i, f := range p.inflight {
		select {
		case <-f.dc.Done():
		default:
			return i
		}
	}
	return len(p.inflight)
}

func (p *publisher) drainReturns() {
	for {
		select {
		case r, ok := <-p.returns:
			if !ok {
				return
			}
			key, _ := r.Headers[HeaderReplayID].(string)
			p.returned[key] = r
		default:
			return
		}
	}
}

// settleAll waits for every publish in flight, oldest first.
func (p *publisher) settleAll() []settled { return p.settleOldest(len(p.inflight)) }

// settleOldest waits for the n oldest publishes in flight, so that the
// rest keep the pipeline busy meanwhile.
func (p *publisher) settleOldest(n int) []settled {
	n = min(n, len(p.inflight))
	out := make([]settled, 0, n)
	single := len(p.inflight) == 1
	for _, f := range p.inflight[:n] {
		out = append(out, p.settle(f, single))
		delete(p.returned, f.key)
	}
	p.inflight = append(p.inflight[:0], p.inflight[n:]...)
	if len(p.inflight) == 0 {
		clear(p.returned)
	}
	return out
}

func (p *publisher) settle(f inflight, single bool) settled {
	timer := time.NewTimer(max(p.timeout-time.Since(f.at), time.Millisecond))
	defer timer.Stop()
	for {
		select {
		case r, ok := <-p.returns:
			if ok {
				key, _ := r.Headers[HeaderReplayID].(string)
				p.returned[key] = r
			}
			continue
		case <-f.dc.Done():
		case <-timer.C:
			return settled{key: f.key, err: errTimeout, uncertain: true}
		}
		break
	}
	p.drainReturns()
	r, wasReturned := p.returned[f.key]
	if !wasReturned && single && len(p.returned) > 0 {
		for _, r2 := range p.returned {
			r, wasReturned = r2, true
		}
	}
	switch {
	case wasReturned:
		return settled{key: f.key, err: fmt.Errorf("%w: %d %s", errReturned, r.ReplyCode, r.ReplyText)}
	case f.dc.Acked():
		return settled{key: f.key}
	case p.ch.IsClosed():
		return settled{key: f.key, err: errClosed, uncertain: true}
	}
	return settled{key: f.key, err: errNacked}
}

func (p *publisher) close() {
	if !p.ch.IsClosed() {
		p.ch.Close()
	}
}
