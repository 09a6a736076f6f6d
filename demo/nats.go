package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATS demo stream and consumers. Each consumer shows one state of a
// JetStream consumer.
const (
	NATSStream = "ORDERS"
	// NATSFulfillment keeps up: it pulls and acks everything.
	NATSFulfillment = "fulfillment"
	// NATSAnalytics is slower than the producers: pending grows.
	NATSAnalytics = "analytics-slow"
	// NATSInvoicing never acks: it reaches max_ack_pending and the server
	// stops delivering to it (stall).
	NATSInvoicing = "invoicing-stalled"
	// NATSNotifier fails some messages until max_deliver gives up on them
	// and terminates others (AckTerm): both are JetStream dead letters.
	NATSNotifier = "notifier"
	// NATSMailer is a push consumer whose deliver subject nobody listens
	// on (stop).
	NATSMailer = "mailer-push"
)

// natsInvoicingMaxAckPending is invoicing-stalled's max_ack_pending.
const natsInvoicingMaxAckPending = 20

// natsNotifierMaxDeliver is how often notifier gets a message it fails.
const natsNotifierMaxDeliver = 3

// NATSOptions configure StartNATS.
type NATSOptions struct {
	Logger *slog.Logger
	// Speed multiplies the pace, as Options.Speed.
	Speed float64
}

// NATSDemo is an embedded nats-server with JetStream and simulated services.
type NATSDemo struct {
	srv    *server.Server
	dir    string
	nc     *nats.Conn
	js     jetstream.JetStream
	timing *Demo // only for scale and sleep
	log    *slog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// StartNATS starts an in-process nats-server with JetStream on a temporary
// directory, on a free loopback port, creates the ORDERS stream and its
// consumers, and starts a producer and the consumers' services. The caller
// must call Close.
func StartNATS(ctx context.Context, opts NATSOptions) (*NATSDemo, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("broker", "nats")
	speed := opts.Speed
	if speed <= 0 {
		speed = 1
	}
	dir, err := os.MkdirTemp("", "queuewatch-demo-nats-")
	if err != nil {
		return nil, fmt.Errorf("demo nats dir: %w", err)
	}
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true,
		ServerName: "queuewatch-demo",
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("embedded nats-server: %w", err)
	}
	srv.Start()
	d := &NATSDemo{srv: srv, dir: dir, timing: &Demo{speed: speed}, log: log}
	if !srv.ReadyForConnections(10 * time.Second) {
		d.stopServer()
		return nil, errors.New("embedded nats-server did not start in 10s")
	}
	if d.nc, err = nats.Connect(srv.ClientURL(), nats.Name("queuewatch demo")); err != nil {
		d.stopServer()
		return nil, fmt.Errorf("connect to demo nats: %w", err)
	}
	if d.js, err = jetstream.New(d.nc); err != nil {
		d.Close()
		return nil, err
	}
	if err := d.declare(ctx); err != nil {
		d.Close()
		return nil, err
	}
	ctx, d.cancel = context.WithCancel(ctx)
	d.goService(ctx, "nats-producer", d.produce)
	d.goService(ctx, NATSFulfillment, func(ctx context.Context) error { return d.consume(ctx, NATSFulfillment, 50, 0, d.ackAll) })
	d.goService(ctx, NATSAnalytics, func(ctx context.Context) error { return d.consume(ctx, NATSAnalytics, 2, time.Second, d.ackAll) })
	d.goService(ctx, NATSInvoicing, func(ctx context.Context) error { return d.consume(ctx, NATSInvoicing, 10, 0, noAck) })
	d.goService(ctx, NATSNotifier, func(ctx context.Context) error { return d.consume(ctx, NATSNotifier, 50, 0, d.notify) })
	return d, nil
}

// URL is the embedded server's client URL.
func (d *NATSDemo) URL() string { return d.srv.ClientURL() }

// Close stops the services and the server and removes its data.
func (d *NATSDemo) Close() {
	d.once.Do(func() {
		if d.cancel != nil {
			d.cancel()
		}
		d.wg.Wait()
		if d.nc != nil {
			d.nc.Close()
		}
		d.stopServer()
	})
}

func (d *NATSDemo) stopServer() {
	d.srv.Shutdown()
	d.srv.WaitForShutdown()
	if err := os.RemoveAll(d.dir); err != nil {
		d.log.Warn("remove demo nats dir", "dir", d.dir, "err", err)
	}
}

func (d *NATSDemo) declare(ctx context.Context) error {
	if _, err := d.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: NATSStream, Subjects: []string{"orders.>"}, MaxAge: time.Hour,
	}); err != nil {
		return fmt.Errorf("create demo stream: %w", err)
	}
	ackWait := d.timing.scale(5 * time.Second)
	for _, c := range []jetstream.ConsumerConfig{
		{Durable: NATSFulfillment, AckPolicy: jetstream.AckExplicitPolicy},
		{Durable: NATSAnalytics, AckPolicy: jetstream.AckExplicitPolicy},
		{Durable: NATSInvoicing, AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: natsInvoicingMaxAckPending, AckWait: time.Hour},
		{Durable: NATSNotifier, AckPolicy: jetstream.AckExplicitPolicy, MaxDeliver: natsNotifierMaxDeliver, AckWait: ackWait, FilterSubject: "orders.created"},
		{Durable: NATSMailer, AckPolicy: jetstream.AckExplicitPolicy, DeliverSubject: "demo.mailer.inbox"},
	} {
		if _, err := d.js.CreateOrUpdateConsumer(ctx, NATSStream, c); err != nil {
			return fmt.Errorf("create demo consumer %s: %w", c.Durable, err)
		}
	}
	return nil
}

func (d *NATSDemo) goService(ctx context.Context, name string, run func(ctx context.Context) error) {
	log := d.log.With("service", name)
	d.wg.Go(func() {
		if err := run(ctx); err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
			log.Error("demo service stopped", "err", err)
		}
	})
}

// produce publishes about four orders a second, alternating created and
// paid events.
func (d *NATSDemo) produce(ctx context.Context) error {
	for i := 1; ; i++ {
		subject := "orders.created"
		if i%2 == 0 {
			subject = "orders.paid"
		}
		msg := &nats.Msg{Subject: subject, Data: fmt.Appendf(nil, `{"order_id":%d,"amount_cents":%d}`, i, 1000+i*37%9000), Header: nats.Header{}}
		msg.Header.Set("Order-Id", strconv.Itoa(i))
		if _, err := d.js.PublishMsg(ctx, msg); err != nil && ctx.Err() == nil {
			d.log.Warn("demo publish", "err", err)
		}
		if !d.timing.sleep(ctx, 250*time.Millisecond) {
			return ctx.Err()
		}
	}
}

// consume fetches up to batch messages at a time from consumer, handles
// each, and sleeps pause (scaled) between batches.
func (d *NATSDemo) consume(ctx context.Context, consumer string, batch int, pause time.Duration, handle func(jetstream.Msg)) error {
	c, err := d.js.Consumer(ctx, NATSStream, consumer)
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		msgs, err := c.Fetch(batch, jetstream.FetchMaxWait(d.timing.scale(2*time.Second)))
		if err != nil {
			if !d.timing.sleep(ctx, time.Second) {
				return ctx.Err()
			}
			continue
		}
		for m := range msgs.Messages() {
			handle(m)
		}
		if pause > 0 && !d.timing.sleep(ctx, pause) {
			return ctx.Err()
		}
	}
	return ctx.Err()
}

func (d *NATSDemo) ackAll(m jetstream.Msg) { _ = m.Ack() }

func noAck(jetstream.Msg) {}

// notify fails every 7th order until max_deliver dead-letters it, and
// terminates every 11th at once as unprocessable (AckTerm).
func (d *NATSDemo) notify(m jetstream.Msg) {
	id, _ := strconv.Atoi(m.Headers().Get("Order-Id"))
	switch {
	case id%11 == 1:
		_ = m.TermWithReason("template missing for order")
	case id%7 == 3:
		_ = m.Nak()
	default:
		_ = m.Ack()
	}
}
