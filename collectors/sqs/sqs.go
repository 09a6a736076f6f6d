package sqs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	brokersqs "github.com/queuewatch/queuewatch/brokers/sqs"
	"github.com/queuewatch/queuewatch/queue"
)

// parallel bounds the GetQueueAttributes requests one poll has in flight:
// enough to hide round trips to a distant region, few enough to stay far
// below SQS's throttling of the account.
const parallel = 8

// Options configure one account's source.
type Options struct {
	// Cluster is the access to the account, shared with its replay
	// backend; its name is the cluster label on every metric.
	Cluster *brokersqs.Cluster
	// Include decides which of the listed queues are read; nil reads all.
	Include func(name string) bool
	// Interval is how often the account is read; zero reads it on every
	// poll.
	Interval time.Duration
	// Tick is the scheduler's poll interval. A poll less than Tick/2
	// before a read is due reads, so that the scheduler's jitter neither
	// delays a read by a whole tick nor, when Tick is as long as
	// Interval, skips one.
	Tick   time.Duration
	Logger *slog.Logger
}

// Source polls one SQS account. The scheduler never runs two polls of one
// source at once; mu guards the state a poll keeps for the next.
type Source struct {
	opts Options
	name string
	log  *slog.Logger
	now  func() time.Time

	mu sync.Mutex
	// last is the snapshot a poll returns until the next read is due:
	// the last read's, or a copy with the queues a job touched read again
	// (Reread); lastRead is when the account was last read.
	last     *queue.Snapshot
	lastRead time.Time
	// known are the DLQs found so far and their sources, kept listed
	// after their queue or policy is gone.
	known map[string][]string
}

// New creates a source; it sends nothing until the first poll.
func New(opts Options) (*Source, error) {
	if opts.Cluster == nil {
		return nil, errors.New("sqs source: no cluster")
	}
	if opts.Include == nil {
		opts.Include = func(string) bool { return true }
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Source{
		opts:  opts,
		name:  opts.Cluster.Name(),
		log:   opts.Logger.With("broker", "sqs", "cluster", opts.Cluster.Name()),
		now:   time.Now,
		known: map[string][]string{},
	}, nil
}

// Broker returns queue.SQS.
func (s *Source) Broker() queue.Broker { return queue.SQS }

// Cluster returns the configured account name.
func (s *Source) Cluster() string { return s.name }

// Close releases nothing: the SDK client holds only idle HTTP connections.
func (s *Source) Close() {}

// Poll reads the account, or returns the last snapshot when the next read
// is not yet due (see Options.Tick).
func (s *Source) Poll(ctx context.Context) (*queue.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.last != nil && now.Sub(s.lastRead) < s.opts.Interval-s.opts.Tick/2 {
		return s.handOut(), nil
	}
	snap, err := s.read(ctx, now)
	if err != nil {
		return nil, err
	}
	s.last, s.lastRead = snap, now
	return s.handOut(), nil
}

// handOut is a copy of the last snapshot with queues of its own: the
// collector's evaluation writes each queue's status and onset into what a
// poll returns, while s.last stays as read, for Reread to start from under
// s.mu.
func (s *Source) handOut() *queue.Snapshot {
	c := *s.last
	c.SQSQueues = slices.Clone(s.last.SQSQueues)
	return &c
}

// Reread reads the attributes of the named queues again, one
// GetQueueAttributes each, between two reads of the account: a DLQ job
// (job) just changed their counts, and at the account's interval the
// pages and /metrics would show the old ones for minutes. The next Poll
// returns a copy of the last snapshot with those queues, the DLQs among
// them, and the snapshot's time, updated; the account's read time
// (queue.SQSAccount.ReadAt) and when the next read is due stay as they
// were. Names that are not among the last read's queues are left out (not
// watched, or the backend's name of a destination that is no queue); a
// queue that cannot be read keeps its counts and is in the returned
// error. It reports whether anything was read.
func (s *Source) Reread(ctx context.Context, names []string, job string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		return false, nil // the first read is still to come
	}
	now := s.now()
	next := *s.last
	next.SQSQueues = slices.Clone(s.last.SQSQueues)
	account := *s.last.SQS
	next.SQS = &account
	var errs []error
	read := map[string]bool{}
	for _, name := range names {
		i := slices.IndexFunc(next.SQSQueues, func(q queue.SQSQueue) bool { return q.Name == name })
		if i < 0 || read[name] {
			continue
		}
		old := next.SQSQueues[i]
		q := s.readQueue(ctx, old.URL)
		if q.ARN == "" {
			errs = append(errs, fmt.Errorf("re-read %s after job %s: %s", name, job, q.Err))
			continue
		}
		read[name] = true
		// A DLQ stays listed once known (see dlqs), so the last snapshot
		// tells whether q is one.
		q.DLQ = !s.last.JudgedAsReader("", name)
		if old.OldestAgeBasis == queue.SQSAgeCloudWatch && q.Messages() > 0 {
			// CloudWatch is asked at the account's reads only.
			q.OldestAge, q.OldestAgeBasis = old.OldestAge, old.OldestAgeBasis
		} else {
			s.estimateAge(&q, now) // an empty queue has no age, and forgets it
		}
		q.Read = queue.DepthRead{At: now, Every: account.ReadEvery, AfterJob: job}
		next.SQSQueues[i] = q
	}
	if len(read) == 0 {
		return false, errors.Join(errs...)
	}
	// A queue read whole now is no longer the read's partial failure.
	next.Partial = slices.DeleteFunc(slices.Clone(s.last.Partial), func(p string) bool {
		name, _, ok := strings.Cut(strings.TrimPrefix(p, "queue "), ": ")
		return strings.HasPrefix(p, "queue ") && ok && read[name]
	})
	next.Time = now
	next.DLQs = s.dlqs(next.SQSQueues)
	next.SQS.Requests = s.requests()
	s.last = &next
	s.log.Debug("re-read after a job", "job", job, "queues", len(read))
	return true, errors.Join(errs...)
}

// read lists and reads the watched queues and derives the DLQs.
func (s *Source) read(ctx context.Context, now time.Time) (*queue.Snapshot, error) {
	urls, err := s.opts.Cluster.ListQueueURLs(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqs %s: %w", s.name, err)
	}
	var watched []string
	for _, u := range urls {
		if s.opts.Include(brokersqs.QueueNameFromURL(u)) {
			watched = append(watched, u)
		}
	}
	snap := &queue.Snapshot{
		Broker: queue.SQS, Cluster: s.name, Time: now,
		SQS: &queue.SQSAccount{ReadAt: now, ReadEvery: max(s.opts.Interval, s.opts.Tick), Listed: len(urls)},
	}
	snap.SQSQueues = s.readQueues(ctx, watched)
	for i := range snap.SQSQueues {
		q := &snap.SQSQueues[i]
		q.Read = queue.DepthRead{At: now, Every: snap.SQS.ReadEvery}
		if q.Err != "" {
			snap.Partial = append(snap.Partial, "queue "+q.Name+": "+q.Err)
		}
	}
	// A queue the snapshot lists as a DLQ is not judged by its consumers
	// (alerts evaluation), as the alert rules leave it out.
	snap.DLQs = s.dlqs(snap.SQSQueues)
	for i := range snap.SQSQueues {
		q := &snap.SQSQueues[i]
		q.DLQ = !snap.JudgedAsReader("", q.Name)
		s.estimateAge(q, now)
	}
	if err := s.readCloudWatch(ctx, snap, now); err != nil {
		s.log.Warn("read cloudwatch", "err", err)
		snap.Partial = append(snap.Partial, err.Error())
	}
	snap.SQS.Requests = s.requests()
	snap.Duration = s.now().Sub(now)
	return snap, nil
}

// requests are the requests sent to the account so far, per action.
func (s *Source) requests() []queue.SQSRequests {
	counts := s.opts.Cluster.Requests()
	var out []queue.SQSRequests
	for _, a := range brokersqs.Actions(counts) {
		out = append(out, queue.SQSRequests{Action: a, Count: counts[a]})
	}
	return out
}

// estimateAge fills q's oldest age from the oldest send time the replay
// backend's receives saw (a browse, a job), as an estimate: SQS's API
// tells no age. A queue seen empty forgets it, so a later backlog is not
// dated by messages long gone; a queue whose attributes were not read
// keeps it unused.
func (s *Source) estimateAge(q *queue.SQSQueue, now time.Time) {
	if q.ARN == "" {
		return
	}
	c := s.opts.Cluster
	if q.Messages() == 0 {
		c.ForgetSent(q.Name)
		return
	}
	if sent, ok := c.OldestSent(q.Name); ok {
		q.OldestAge, q.OldestAgeBasis = max(0, now.Sub(sent)), queue.SQSAgeBrowse
	}
}

// readCloudWatch reads the oldest age of every queue whose attributes
// were read from CloudWatch, when the account asks for it: it replaces a
// browse estimate. A queue CloudWatch has no recent datapoint for keeps
// what it had; a failed call is the read's partial error.
func (s *Source) readCloudWatch(ctx context.Context, snap *queue.Snapshot, now time.Time) error {
	c := s.opts.Cluster
	if !c.ReadsOldestAge() {
		return nil
	}
	var names []string
	for _, q := range snap.SQSQueues {
		if q.ARN != "" {
			names = append(names, q.Name)
		}
	}
	snap.SQS.OldestAgeMetrics = len(names)
	ages, err := c.OldestAges(ctx, names, now)
	for i := range snap.SQSQueues {
		q := &snap.SQSQueues[i]
		if age, ok := ages[q.Name]; ok {
			q.OldestAge, q.OldestAgeBasis = age, queue.SQSAgeCloudWatch
		}
	}
	return err
}

// readQueues reads the attributes of every queue in urls, parallel at a
// time, in name order.
func (s *Source) readQueues(ctx context.Context, urls []string) []queue.SQSQueue {
	out := make([]queue.SQSQueue, len(urls))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = s.readQueue(ctx, u)
		})
	}
	wg.Wait()
	slices.SortFunc(out, func(a, b queue.SQSQueue) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// readQueue reads one queue; a failure is the queue's Err.
func (s *Source) readQueue(ctx context.Context, url string) queue.SQSQueue {
	q := queue.SQSQueue{Cluster: s.name, Name: brokersqs.QueueNameFromURL(url), URL: url}
	q.FIFO = brokersqs.IsFIFO(q.Name)
	attrs, err := s.opts.Cluster.Attributes(ctx, url)
	if err != nil {
		s.log.Warn("read queue", "queue", q.Name, "err", err)
		q.Err = err.Error()
		return q
	}
	q.ARN = attrs["QueueArn"]
	q.Visible = number(attrs["ApproximateNumberOfMessages"])
	q.InFlight = number(attrs["ApproximateNumberOfMessagesNotVisible"])
	q.Delayed = number(attrs["ApproximateNumberOfMessagesDelayed"])
	q.VisibilityTimeout = time.Duration(number(attrs["VisibilityTimeout"])) * time.Second
	q.Retention = time.Duration(number(attrs["MessageRetentionPeriod"])) * time.Second
	if attrs["FifoQueue"] == "true" {
		q.FIFO = true
	}
	policy, err := brokersqs.ParseRedrivePolicy(attrs["RedrivePolicy"])
	if err == nil && policy.DeadLetterTargetARN != "" {
		q.DeadLetterQueue, err = brokersqs.QueueNameFromARN(policy.DeadLetterTargetARN)
		q.MaxReceiveCount = policy.MaxReceiveCount
	}
	if err != nil {
		// The counts are good; only where its dead letters go is unknown.
		s.log.Warn("read redrive policy", "queue", q.Name, "err", err)
		q.Err = err.Error()
	}
	return q
}

// dlqs derives the DLQs from the queues' redrive policies, adds the ones
// found by earlier polls and reads each one's depth from its queue.
func (s *Source) dlqs(queues []queue.SQSQueue) []queue.DLQ {
	sources := map[string][]string{}
	for _, q := range queues {
		if q.DeadLetterQueue != "" {
			sources[q.DeadLetterQueue] = append(sources[q.DeadLetterQueue], q.Name)
		}
	}
	for name, src := range sources {
		s.known[name] = src
	}
	out := make([]queue.DLQ, 0, len(s.known))
	for name, src := range s.known {
		d := queue.DLQ{Broker: queue.SQS, Cluster: s.name, Name: name, Sources: slices.Sorted(slices.Values(src)), Detection: queue.DetectedTopology}
		i := slices.IndexFunc(queues, func(q queue.SQSQueue) bool { return q.Name == name })
		switch {
		case i >= 0 && queues[i].Err != "" && queues[i].ARN == "":
			d.Err = queues[i].Err
		case i >= 0:
			d.Messages, d.Read = queues[i].Messages(), queues[i].Read
		case sources[name] != nil:
			// Named by a policy but not read: left out by prefix, include or
			// exclude, or deleted while its sources still point at it.
			d.Err = "not among the watched queues (sqs queues.prefix, include and exclude), or deleted"
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b queue.DLQ) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// number is an attribute's integer value; SQS sends them as decimal text,
// and a missing one reads as 0.
func number(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
