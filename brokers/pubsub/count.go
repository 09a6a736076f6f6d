package pubsub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// countBatch is how many messages one pull of a count asks for: Pub/Sub
// returns at most 1,000.
const countBatch = 1000

// CountLimit is the most messages a count holds: every one is held until
// the count ends (given back early it would be pulled again and counted
// twice), and all must be given back well within the subscription's ack
// deadline.
const CountLimit = 10000

// countPullWait bounds one pull of a count: a pull of an empty
// subscription waits for messages, and an answer with nothing in it, or
// none within this time, ends the count.
const countPullWait = 2 * time.Second

// ErrCountChained is returned for a DLQ subscription that has a
// dead-letter policy of its own: pulling it spends delivery attempts
// that would move its messages on.
var ErrCountChained = errors.New("the dead-letter subscription has its own dead-letter policy: pulling it would move messages on")

// Count counts the messages a pull subscription holds without taking
// any: it pulls until a pull brings nothing (or CountLimit are held, or
// ctx ends), then gives every message back at once (ModifyAckDeadline 0),
// so they are redelivered as before. It is a lower bound: messages held
// by a consumer, or not returned by a pull (Pub/Sub returns what it has
// at hand), are not seen. A count spends one delivery attempt of each
// message, which matters only on a subscription with a dead-letter
// policy, refused here (ErrCountChained).
func (c *Cluster) Count(ctx context.Context, sub *Subscription) (n int64, err error) {
	if sub.DeadLetterTopic != "" {
		return 0, ErrCountChained
	}
	if sub.Delivery != Pull {
		return 0, fmt.Errorf("a %s subscription cannot be pulled", sub.Delivery)
	}
	client, err := c.Client(ctx)
	if err != nil {
		return 0, err
	}
	name := "projects/" + c.cfg.Project + "/subscriptions/" + sub.ID
	var held []string
	defer func() {
		// Give back even when ctx is over: held messages would otherwise
		// stay invisible for the ack deadline.
		if gerr := c.giveBack(context.WithoutCancel(ctx), name, held); gerr != nil {
			err = errors.Join(err, gerr)
		}
	}()
	for len(held) < CountLimit {
		got, err := c.pull(ctx, client.SubscriptionAdminClient.Pull, name, min(countBatch, CountLimit-len(held)))
		if err != nil {
			return int64(len(held)), fmt.Errorf("pull %s: %w", sub.ID, err)
		}
		if len(got) == 0 {
			break
		}
		held = append(held, got...)
	}
	return int64(len(held)), nil
}

// pullFunc is SubscriptionAdminClient.Pull.
type pullFunc = func(context.Context, *pubsubpb.PullRequest, ...gax.CallOption) (*pubsubpb.PullResponse, error)

// pull asks for up to n messages and returns their ack ids; a pull that
// found nothing within countPullWait returns none.
func (c *Cluster) pull(ctx context.Context, pull pullFunc, name string, n int) ([]string, error) {
	pctx, cancel := context.WithTimeout(ctx, countPullWait)
	defer cancel()
	resp, err := pull(pctx, &pubsubpb.PullRequest{Subscription: name, MaxMessages: int32(n)})
	if ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(resp.GetReceivedMessages()))
	for _, m := range resp.GetReceivedMessages() {
		ids = append(ids, m.GetAckId())
	}
	return ids, nil
}

// giveBack makes the held messages deliverable again at once, 1,000 ack
// ids a request.
func (c *Cluster) giveBack(ctx context.Context, name string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	client, err := c.Client(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for start := 0; start < len(ids); start += countBatch {
		batch := ids[start:min(start+countBatch, len(ids))]
		if err := client.SubscriptionAdminClient.ModifyAckDeadline(ctx, &pubsubpb.ModifyAckDeadlineRequest{Subscription: name, AckIds: batch}); err != nil {
			return fmt.Errorf("give back %d messages: %w", len(ids)-start, err)
		}
	}
	return nil
}
