package pubsub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/queuewatch/queuewatch/dlqreplay"
)

// A lease is a job's hold on a DLQ: a topic named for the DLQ
// subscription (leaseTopic) whose labels name the job and the time the
// lease runs out. Creating a topic is atomic, so of two jobs opened at
// once one gets AlreadyExists and refuses. Nothing is ever published to
// it and no subscription is attached.
//
// Labels cannot be updated on the emulator (UpdateTopic refuses the
// "labels" mask), so a renewal deletes the topic and creates it again
// with the new time, after checking that it still names this job. A lease
// whose time has passed (its job crashed) is taken over the same way.
// Neither step is atomic: two instances taking over the same expired
// lease in the same instant can both succeed, and the next renewal of the
// one that lost finds the other's job and stops it. This is a best-effort
// lock, as SQS's in-flight check is; within one instance dlqreplay's own
// lock excludes jobs.
type lease struct {
	b    *Backend
	dlq  string
	name string // the lease topic's full name
	job  string // the job as a label value
}

// Labels of a lease topic.
const (
	labelJob   = "queuewatch-job"
	labelUntil = "queuewatch-until" // unix milliseconds
)

// errLeaseLost: the lease topic names another job (or is gone): another
// instance took the DLQ over, and this job must stop.
var errLeaseLost = errors.New("the dlq's lease was taken over by another job")

// leaseTopic is the short id of the DLQ subscription sub's lease topic. A
// topic id is at most 255 characters, as a subscription id is: a long one
// is hashed.
func leaseTopic(sub string) string {
	return "queuewatch-lease-" + shortened(sub, 255-len("queuewatch-lease-"))
}

// shortened is s when it has at most n characters, else a hash of it.
func shortened(s string, n int) string {
	if len(s) <= n {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// labelValue is s as a label value: lower case letters, digits, "_" and
// "-", at most 63 characters.
func labelValue(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '_'
	}, s)
	return s[:min(len(s), 63)]
}

// acquire takes the DLQ's lease for job, or answers a *ConflictError
// while another job holds it.
func (b *Backend) acquire(ctx context.Context, ref dlqreplay.Ref, job string) (*lease, error) {
	l := &lease{b: b, dlq: ref.ID(), name: b.topicPath(leaseTopic(ref.Name)), job: labelValue(job)}
	err := l.create(ctx)
	if err == nil {
		return l, nil
	}
	if status.Code(err) != codes.AlreadyExists {
		return nil, err
	}
	t, err := b.c.TopicAdminClient.GetTopic(ctx, &pubsubpb.GetTopicRequest{Topic: l.name})
	if notFound(err) {
		// Released meanwhile: one more try, and no more.
		return l, l.conflictOr(l.create(ctx))
	}
	if err != nil {
		return nil, fmt.Errorf("read the lease of %s: %w", ref.Name, err)
	}
	if until(t).After(time.Now()) {
		return nil, &dlqreplay.ConflictError{DLQ: l.dlq}
	}
	b.opts.Logger.Info("taking over an expired lease: its job stopped renewing it", "cluster", b.Cluster(),
		"dlq", l.dlq, "job", t.GetLabels()[labelJob], "until", until(t))
	if err := l.delete(ctx); err != nil {
		return nil, err
	}
	return l, l.conflictOr(l.create(ctx))
}

// conflictOr is a *ConflictError for AlreadyExists, else err.
func (l *lease) conflictOr(err error) error {
	if status.Code(err) == codes.AlreadyExists {
		return &dlqreplay.ConflictError{DLQ: l.dlq}
	}
	return err
}

// until is when the lease topic t runs out; zero when it does not say.
func until(t *pubsubpb.Topic) time.Time {
	ms, err := strconv.ParseInt(t.GetLabels()[labelUntil], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// create creates the lease topic, running out one TTL from now.
func (l *lease) create(ctx context.Context) error {
	_, err := l.b.c.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: l.name, Labels: map[string]string{
		labelJob: l.job, labelUntil: strconv.FormatInt(time.Now().Add(l.b.opts.LeaseTTL).UnixMilli(), 10),
	}})
	if err != nil && status.Code(err) != codes.AlreadyExists {
		return fmt.Errorf("create the lease topic %s: %w", l.b.shortName(l.name), err)
	}
	return err
}

func (l *lease) delete(ctx context.Context) error {
	err := l.b.c.TopicAdminClient.DeleteTopic(ctx, &pubsubpb.DeleteTopicRequest{Topic: l.name})
	if err != nil && !notFound(err) {
		return fmt.Errorf("delete the lease topic %s: %w", l.b.shortName(l.name), err)
	}
	return nil
}

// ours reports whether the lease topic still names this job.
func (l *lease) ours(ctx context.Context) error {
	t, err := l.b.c.TopicAdminClient.GetTopic(ctx, &pubsubpb.GetTopicRequest{Topic: l.name})
	if notFound(err) {
		return errLeaseLost
	}
	if err != nil {
		return fmt.Errorf("read the lease topic %s: %w", l.b.shortName(l.name), err)
	}
	if t.GetLabels()[labelJob] != l.job {
		return fmt.Errorf("%w (%s)", errLeaseLost, t.GetLabels()[labelJob])
	}
	return nil
}

// renew runs the lease out one TTL from now.
func (l *lease) renew(ctx context.Context) error {
	if err := l.ours(ctx); err != nil {
		return err
	}
	if err := l.delete(ctx); err != nil {
		return err
	}
	if err := l.create(ctx); status.Code(err) == codes.AlreadyExists {
		return errLeaseLost
	} else if err != nil {
		return err
	}
	return nil
}

// release deletes the lease topic while it names this job.
func (l *lease) release(ctx context.Context) error {
	if err := l.ours(ctx); err != nil {
		if errors.Is(err, errLeaseLost) {
			return nil
		}
		return err
	}
	return l.delete(ctx)
}
