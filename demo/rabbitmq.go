package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// RabbitMQ demo queues, all in the URL's vhost. Each work queue dead-letters
// into its DLQ a different way, so the DLQ view has variety.
const (
	RabbitOrders      = "demo.orders"
	RabbitOrdersDLQ   = "demo.orders.dlq"
	RabbitEmails      = "demo.emails"
	RabbitEmailsDLQ   = "demo.emails.dead-letter"
	RabbitInvoices    = "demo.invoices"
	RabbitInvoicesDLQ = "demo.invoices.parking-lot"
	RabbitDLX         = "demo.dlx"
)

// RabbitDemo runs simulated services on a real RabbitMQ broker.
type RabbitDemo struct {
	vhost  string
	conn   *amqp.Connection
	cancel context.CancelFunc
	wg     sync.WaitGroup
	log    *slog.Logger
	once   sync.Once
}

// StartRabbitMQ declares the demo queues on the broker at url and starts a
// producer and consumers: demo.orders rejects ~6% of orders (dead-lettered
// through the default exchange), demo.emails is a quorum queue whose
// consumer keeps failing some messages until the delivery limit
// dead-letters them through a direct exchange, and demo.invoices holds
// messages nobody consumes until their TTL expires.
func StartRabbitMQ(ctx context.Context, url string, log *slog.Logger) (*RabbitDemo, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	uri, err := amqp.ParseURI(url)
	if err != nil {
		return nil, fmt.Errorf("rabbitmq url: %w", err)
	}
	conn, err := amqp.DialConfig(url, amqp.Config{Dial: amqp.DefaultDial(3 * time.Second)})
	if err != nil {
		return nil, fmt.Errorf("connect to rabbitmq: %w", err)
	}
	if err := declareRabbit(conn); err != nil {
		conn.Close()
		return nil, err
	}
	if err := seedRabbitDeadLetters(conn, seededRabbitDeadLetters); err != nil {
		conn.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &RabbitDemo{vhost: uri.Vhost, conn: conn, cancel: cancel, log: log.With("broker", "rabbitmq")}
	r.goService(ctx, "producer", r.produce)
	r.goService(ctx, "orders-consumer", r.consumeOrders)
	r.goService(ctx, "emails-consumer", r.consumeEmails)
	return r, nil
}

// VHost is the vhost the demo queues live in.
func (r *RabbitDemo) VHost() string { return r.vhost }

// Close stops the services and deletes the demo queues and exchange, so the
// demo leaves nothing behind on a shared broker.
func (r *RabbitDemo) Close() {
	r.once.Do(func() {
		r.cancel()
		r.wg.Wait()
		if ch, err := r.conn.Channel(); err == nil {
			for _, q := range []string{RabbitOrders, RabbitOrdersDLQ, RabbitEmails, RabbitEmailsDLQ, RabbitInvoices, RabbitInvoicesDLQ} {
				_, _ = ch.QueueDelete(q, false, false, false)
			}
			_ = ch.ExchangeDelete(RabbitDLX, false, false)
			ch.Close()
		}
		r.conn.Close()
	})
}

func (r *RabbitDemo) goService(ctx context.Context, name string, run func(context.Context, *amqp.Channel) error) {
	r.wg.Go(func() {
		ch, err := r.conn.Channel()
		if err != nil {
			r.log.Warn("demo service not started", "service", name, "err", err)
			return
		}
		defer ch.Close()
		if err := run(ctx, ch); err != nil && ctx.Err() == nil {
			r.log.Warn("demo service stopped", "service", name, "err", err)
		}
	})
}

func declareRabbit(conn *amqp.Connection) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	steps := []func() error{
		func() error { return ch.ExchangeDeclare(RabbitDLX, "direct", true, false, false, false, nil) },
		func() error { return declare(ch, RabbitOrdersDLQ, nil) },
		func() error {
			return declare(ch, RabbitOrders, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": RabbitOrdersDLQ})
		},
		func() error { return declare(ch, RabbitEmailsDLQ, amqp.Table{"x-queue-type": "quorum"}) },
		func() error { return ch.QueueBind(RabbitEmailsDLQ, RabbitEmails, RabbitDLX, false, nil) },
		func() error {
			return declare(ch, RabbitEmails, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3), "x-dead-letter-exchange": RabbitDLX})
		},
		func() error { return declare(ch, RabbitInvoicesDLQ, nil) },
		func() error { return ch.QueueBind(RabbitInvoicesDLQ, RabbitInvoices, RabbitDLX, false, nil) },
		func() error {
			return declare(ch, RabbitInvoices, amqp.Table{"x-message-ttl": int32(20_000), "x-dead-letter-exchange": RabbitDLX})
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("declare demo topology: %w", err)
		}
	}
	return nil
}

// seededRabbitDeadLetters is how many orders StartRabbitMQ dead-letters
// before the services start, so demo.orders.dlq has something to inspect
// from the first poll.
const seededRabbitDeadLetters = 12

// seedRabbitDeadLetters publishes n orders and rejects them: RabbitMQ itself
// dead-letters them into demo.orders.dlq with a real x-death header.
func seedRabbitDeadLetters(conn *amqp.Connection, n int) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	for i := range n {
		body, _ := json.Marshal(map[string]any{"id": -i - 1, "queue": RabbitOrders, "total": float64(rand.IntN(10000)) / 100, "seeded": true})
		err := ch.PublishWithContext(context.Background(), "", RabbitOrders, false, false, amqp.Publishing{
			ContentType: "application/json", DeliveryMode: amqp.Persistent,
			MessageId: fmt.Sprintf("seed-%d", i+1), Timestamp: time.Now(), Body: body,
			Headers: amqp.Table{"x-demo-tenant": []string{"acme", "globex", "initech"}[i%3]},
		})
		if err != nil {
			return fmt.Errorf("seed demo dead letters: %w", err)
		}
		d, ok, err := ch.Get(RabbitOrders, false)
		if err != nil {
			return fmt.Errorf("seed demo dead letters: get: %w", err)
		}
		if !ok {
			return fmt.Errorf("seed demo dead letters: %s was empty", RabbitOrders)
		}
		if err := d.Reject(false); err != nil {
			return fmt.Errorf("seed demo dead letters: %w", err)
		}
	}
	return nil
}

func declare(ch *amqp.Channel, name string, args amqp.Table) error {
	_, err := ch.QueueDeclare(name, true, false, false, false, args)
	return err
}

// produce publishes orders, emails and invoices at a few messages a second.
func (r *RabbitDemo) produce(ctx context.Context, ch *amqp.Channel) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		queue := []string{RabbitOrders, RabbitOrders, RabbitEmails, RabbitInvoices}[n%4]
		body, _ := json.Marshal(map[string]any{"id": n, "queue": queue, "total": float64(rand.IntN(10000)) / 100})
		err := ch.PublishWithContext(ctx, "", queue, false, false, amqp.Publishing{
			ContentType: "application/json", DeliveryMode: amqp.Persistent,
			MessageId: fmt.Sprintf("m-%d", n), Timestamp: time.Now(), Body: body,
			Headers: amqp.Table{"x-demo-tenant": []string{"acme", "globex", "initech"}[n%3]},
		})
		if err != nil {
			return err
		}
	}
}

// consumeOrders acks orders, rejecting ~6% without requeue: RabbitMQ
// dead-letters those into demo.orders.dlq with an x-death header.
func (r *RabbitDemo) consumeOrders(ctx context.Context, ch *amqp.Channel) error {
	deliveries, err := ch.ConsumeWithContext(ctx, RabbitOrders, "demo-orders", false, false, false, false, nil)
	if err != nil {
		return err
	}
	for d := range deliveries {
		if rand.IntN(100) < 6 {
			_ = d.Reject(false)
			continue
		}
		_ = d.Ack(false)
	}
	return nil
}

// consumeEmails fails ~5% of emails for good, returning them to the queue
// until the quorum queue's delivery limit dead-letters them.
func (r *RabbitDemo) consumeEmails(ctx context.Context, ch *amqp.Channel) error {
	deliveries, err := ch.ConsumeWithContext(ctx, RabbitEmails, "demo-emails", false, false, false, false, nil)
	if err != nil {
		return err
	}
	for d := range deliveries {
		if id := d.MessageId; len(id) > 0 && id[len(id)-1] == '7' && rand.IntN(2) == 0 {
			_ = d.Nack(false, true)
			continue
		}
		_ = d.Ack(false)
	}
	return nil
}
