package sqs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/queuewatch/queuewatch/dlqreplay"
)

// maxMoveRate is the most messages per second SQS lets a message move
// task move (MaxNumberOfMessagesPerSecond).
const maxMoveRate = 500

// startTimeout bounds StartMessageMoveTask: a server may never answer it
// (ElasticMQ, for a queue that is nobody's DLQ), and a job must not hang
// on it.
const startTimeout = 10 * time.Second

// NativeMaxRate is SQS's cap on a move task's rate: a native job with no
// rate of its own asks for dlq.replay_rate capped at it.
func (b *Backend) NativeMaxRate() float64 { return maxMoveRate }

// StartNative starts SQS's own redrive (StartMessageMoveTask) of every
// message of the DLQ to its single source queue, or to the queue
// target.Name. The destination is always sent: without one SQS picks the
// sources itself (ElasticMQ: the first). SQS runs one move task per
// queue; one already running (of this instance, another, or the AWS
// console) is a *dlqreplay.ConflictError. Unlike the pipeline's jobs this
// reads no message, so a DLQ with a redrive policy of its own may be
// redriven too.
func (b *Backend) StartNative(ctx context.Context, ref dlqreplay.Ref, target dlqreplay.Target, rate float64) (dlqreplay.NativeTask, error) {
	if rate > maxMoveRate {
		return nil, fmt.Errorf("rate %v: SQS moves at most %d messages per second; ask for less, or for no limit: %w", rate, maxMoveRate, dlqreplay.ErrInvalidRequest)
	}
	d, err := b.findDLQ(ctx, ref)
	if err != nil {
		return nil, err
	}
	dest := target.Name
	if target.Kind != dlqreplay.TargetNamed {
		if len(d.sources) != 1 {
			return nil, fmt.Errorf("dlq %s is the dead-letter queue of %d queues (%s): name the one to redrive to: %w",
				ref.Name, len(d.sources), strings.Join(d.sources, ", "), dlqreplay.ErrInvalidRequest)
		}
		dest = d.sources[0]
	}
	destARN, err := b.queueARN(ctx, dest)
	if err != nil {
		return nil, err
	}
	t := &moveTask{b: b, dlq: ref.Name, dlqARN: d.attrs["QueueArn"], dest: dest}
	if running, err := t.running(ctx); err != nil {
		return nil, err
	} else if running != "" {
		return nil, t.conflict(ref, running)
	}
	in := &sdk.StartMessageMoveTaskInput{SourceArn: aws.String(t.dlqARN), DestinationArn: aws.String(destARN)}
	if rate > 0 {
		in.MaxNumberOfMessagesPerSecond = aws.Int32(int32(math.Ceil(rate)))
	}
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	out, err := b.c.StartMessageMoveTask(sctx, in)
	if err != nil {
		// SQS refuses a second task with UnsupportedOperation; another
		// server may say it otherwise, so the list decides.
		if running, lerr := t.running(ctx); lerr == nil && running != "" {
			return nil, t.conflict(ref, running)
		}
		return nil, fmt.Errorf("start message move task %s → %s: %w", ref.Name, dest, err)
	}
	// The task moves messages out: what browses saw of the DLQ's oldest
	// age no longer holds.
	b.opts.Cluster.ForgetSent(ref.Name)
	t.handle = aws.ToString(out.TaskHandle)
	// AWS lists a finished task without its handle: it is then known by
	// when it started.
	if e, err := t.find(ctx); err == nil && e != nil {
		t.started = e.StartedTimestamp
	}
	return t, nil
}

// queueARN is the ARN of the queue named name (ErrTargetMissing when it
// does not exist).
func (b *Backend) queueARN(ctx context.Context, name string) (string, error) {
	url, err := b.queueURL(ctx, name)
	if err != nil {
		return "", err
	}
	out, err := b.c.GetQueueAttributes(ctx, &sdk.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", fmt.Errorf("get the arn of %s: %w", name, err)
	}
	return out.Attributes[string(types.QueueAttributeNameQueueArn)], nil
}

// moveTask is one SQS message move task out of a DLQ (a
// dlqreplay.NativeTask).
type moveTask struct {
	b       *Backend
	dlq     string
	dlqARN  string
	dest    string
	handle  string
	started int64 // StartedTimestamp, 0 until known

	mu        sync.Mutex
	cancelled bool // Cancel was asked: a task no longer listed was cancelled
}

// Target is the destination queue's name.
func (t *moveTask) Target() string { return t.dest }

func (t *moveTask) conflict(ref dlqreplay.Ref, handle string) error {
	return fmt.Errorf("sqs already runs a message move task on %s (task %s), and runs one per queue: %w",
		ref.Name, handle, &dlqreplay.ConflictError{DLQ: ref.ID()})
}

// list is the DLQ's recent move tasks, newest first.
func (t *moveTask) list(ctx context.Context) ([]types.ListMessageMoveTasksResultEntry, error) {
	out, err := t.b.c.ListMessageMoveTasks(ctx, &sdk.ListMessageMoveTasksInput{SourceArn: aws.String(t.dlqARN), MaxResults: aws.Int32(10)})
	if err != nil {
		return nil, fmt.Errorf("list message move tasks of %s: %w", t.dlq, err)
	}
	return out.Results, nil
}

// running is the handle of a move task that runs on the DLQ, "" when none.
func (t *moveTask) running(ctx context.Context) (string, error) {
	tasks, err := t.list(ctx)
	if err != nil {
		return "", err
	}
	for _, e := range tasks {
		if s := aws.ToString(e.Status); s == "RUNNING" || s == "CANCELLING" {
			return aws.ToString(e.TaskHandle), nil
		}
	}
	return "", nil
}

// find is this task's entry in the list, nil when it is not listed: by
// its handle, or once finished (when AWS drops the handle) by its start.
func (t *moveTask) find(ctx context.Context) (*types.ListMessageMoveTasksResultEntry, error) {
	tasks, err := t.list(ctx)
	if err != nil {
		return nil, err
	}
	for i, e := range tasks {
		h := aws.ToString(e.TaskHandle)
		if h == t.handle || (h == "" && t.started != 0 && e.StartedTimestamp == t.started) {
			return &tasks[i], nil
		}
	}
	return nil, nil
}

// Progress reads the task's state from ListMessageMoveTasks. A task no
// longer listed after a Cancel was cancelled (ElasticMQ drops cancelled
// tasks from the list).
func (t *moveTask) Progress(ctx context.Context) (dlqreplay.NativeProgress, error) {
	e, err := t.find(ctx)
	if err != nil {
		return dlqreplay.NativeProgress{}, err
	}
	t.mu.Lock()
	cancelled := t.cancelled
	t.mu.Unlock()
	if e == nil {
		if cancelled {
			return dlqreplay.NativeProgress{State: dlqreplay.StateCancelled}, nil
		}
		return dlqreplay.NativeProgress{}, fmt.Errorf("message move task %s of %s is not listed", t.handle, t.dlq)
	}
	p := dlqreplay.NativeProgress{Moved: e.ApproximateNumberOfMessagesMoved, ToMove: aws.ToInt64(e.ApproximateNumberOfMessagesToMove)}
	switch aws.ToString(e.Status) {
	case "COMPLETED":
		p.State = dlqreplay.StateSucceeded
	case "CANCELLED":
		p.State = dlqreplay.StateCancelled
	case "FAILED":
		p.State, p.Reason = dlqreplay.StateFailed, aws.ToString(e.FailureReason)
	default: // RUNNING, CANCELLING
		p.State = dlqreplay.StateRunning
	}
	return p, nil
}

// Cancel cancels the task (CancelMessageMoveTask). A task SQS no longer
// knows has ended: Progress tells how.
func (t *moveTask) Cancel(ctx context.Context) error {
	t.mu.Lock()
	t.cancelled = true
	t.mu.Unlock()
	_, err := t.b.c.CancelMessageMoveTask(ctx, &sdk.CancelMessageMoveTaskInput{TaskHandle: aws.String(t.handle)})
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "ResourceNotFoundException" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cancel message move task %s of %s: %w", t.handle, t.dlq, err)
	}
	return nil
}

// The interfaces this package implements.
var (
	_ dlqreplay.NativeRedriver   = (*Backend)(nil)
	_ dlqreplay.NativeRateCapper = (*Backend)(nil)
	_ dlqreplay.NativeTask       = (*moveTask)(nil)
)
