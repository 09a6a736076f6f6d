package pubsub

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/iterator"
)

// Delivery is how a subscription delivers its messages.
type Delivery string

// The kinds of subscription.
const (
	Pull         Delivery = "pull"
	Push         Delivery = "push"
	BigQuery     Delivery = "bigquery"
	CloudStorage Delivery = "cloudstorage"
	Bigtable     Delivery = "bigtable"
)

// StateResourceError is a subscription's state when Pub/Sub cannot
// deliver to its destination (a BigQuery table, a bucket, a push
// endpoint's permissions): messages stay in the backlog until fixed.
const StateResourceError = "RESOURCE_ERROR"

// MinDeliveryAttempts is the least maxDeliveryAttempts Pub/Sub accepts
// (and the emulator checks: 5 to 100).
const MinDeliveryAttempts = 5

// deletedTopic is the topic Pub/Sub names for a subscription whose topic
// was deleted.
const deletedTopic = "_deleted-topic_"

// Subscription is one subscription as the admin API lists it, with
// topic names shortened to their id when they are in the project.
type Subscription struct {
	ID       string
	Topic    string
	Delivery Delivery
	// DeadLetterTopic is deadLetterPolicy.deadLetterTopic (an id in the
	// project, else the full name); empty without a policy.
	DeadLetterTopic     string
	MaxDeliveryAttempts int
	// RetryMin and RetryMax are retryPolicy's backoff; zero without one
	// (immediate redelivery).
	RetryMin, RetryMax time.Duration
	AckDeadline        time.Duration
	Retention          time.Duration
	RetainAcked        bool
	Filter             string
	ExactlyOnce        bool
	Ordering           bool
	// State is ACTIVE or RESOURCE_ERROR; empty when not reported (the
	// emulator).
	State    string
	Detached bool
}

// Topic is one topic of the project.
type Topic struct {
	ID string
	// Retention is the topic's own message retention; zero without.
	Retention time.Duration
}

// Topology is one read of a project's topics and subscriptions, sorted by
// id.
type Topology struct {
	Topics        []Topic
	Subscriptions []Subscription
}

// Topology lists the project's topics and subscriptions: two paged admin
// calls, whatever the number of subscriptions.
func (c *Cluster) Topology(ctx context.Context) (*Topology, error) {
	client, err := c.Client(ctx)
	if err != nil {
		return nil, err
	}
	project := "projects/" + c.cfg.Project
	t := &Topology{}
	topics := client.TopicAdminClient.ListTopics(ctx, &pubsubpb.ListTopicsRequest{Project: project})
	for {
		tp, err := topics.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("pubsub %s: list topics: %w", c.cfg.Name, err)
		}
		t.Topics = append(t.Topics, Topic{ID: c.short(tp.GetName()), Retention: tp.GetMessageRetentionDuration().AsDuration()})
	}
	subs := client.SubscriptionAdminClient.ListSubscriptions(ctx, &pubsubpb.ListSubscriptionsRequest{Project: project})
	for {
		s, err := subs.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("pubsub %s: list subscriptions: %w", c.cfg.Name, err)
		}
		t.Subscriptions = append(t.Subscriptions, c.subscription(s))
	}
	slices.SortFunc(t.Topics, func(a, b Topic) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(t.Subscriptions, func(a, b Subscription) int { return strings.Compare(a.ID, b.ID) })
	return t, nil
}

// subscription is s in plain fields.
func (c *Cluster) subscription(s *pubsubpb.Subscription) Subscription {
	out := Subscription{
		ID: c.short(s.GetName()), Topic: c.short(s.GetTopic()), Delivery: delivery(s),
		AckDeadline: time.Duration(s.GetAckDeadlineSeconds()) * time.Second,
		Retention:   s.GetMessageRetentionDuration().AsDuration(),
		RetainAcked: s.GetRetainAckedMessages(), Filter: s.GetFilter(),
		ExactlyOnce: s.GetEnableExactlyOnceDelivery(), Ordering: s.GetEnableMessageOrdering(),
		Detached: s.GetDetached() || s.GetTopic() == deletedTopic,
	}
	if st := s.GetState(); st != pubsubpb.Subscription_STATE_UNSPECIFIED {
		out.State = st.String()
	}
	if p := s.GetDeadLetterPolicy(); p != nil && p.GetDeadLetterTopic() != "" {
		out.DeadLetterTopic = c.short(p.GetDeadLetterTopic())
		// Pub/Sub applies 5 when the policy sets none.
		out.MaxDeliveryAttempts = max(int(p.GetMaxDeliveryAttempts()), MinDeliveryAttempts)
	}
	if r := s.GetRetryPolicy(); r != nil {
		out.RetryMin, out.RetryMax = r.GetMinimumBackoff().AsDuration(), r.GetMaximumBackoff().AsDuration()
	}
	return out
}

// delivery is the kind of s from which of its configs is set.
func delivery(s *pubsubpb.Subscription) Delivery {
	switch {
	case s.GetBigqueryConfig() != nil:
		return BigQuery
	case s.GetCloudStorageConfig() != nil:
		return CloudStorage
	case s.GetBigtableConfig() != nil:
		return Bigtable
	case s.GetPushConfig().GetPushEndpoint() != "":
		return Push
	}
	return Pull
}

// short is the id of a resource name in the cluster's project
// ("projects/p/topics/orders" is "orders"); a name in another project
// stays whole, so it never collides with a local id.
func (c *Cluster) short(name string) string {
	for _, kind := range []string{"/topics/", "/subscriptions/"} {
		if rest, ok := strings.CutPrefix(name, "projects/"+c.cfg.Project+kind); ok {
			return rest
		}
	}
	return name
}
