package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	rabbit "github.com/queuewatch/queuewatch/brokers/rabbitmq"
	"github.com/queuewatch/queuewatch/queue"
)

// Options configure one cluster's source.
type Options struct {
	// Cluster is the access to the cluster, shared with its replay
	// backend; its name is the cluster label on every metric. Check
	// connects to its URL's vhost; polls connect to each vhost they
	// measure. Without a management API (Cluster.Management is nil) only
	// ExplicitQueues are measured.
	Cluster *rabbit.Cluster
	// VHosts limits the watched vhosts; empty watches all.
	VHosts []string
	// IncludeQueue decides which queues (DLQs included) are reported; nil
	// reports all. Topology is resolved over all queues, so a DLQ's sources
	// are complete even when some are not reported.
	IncludeQueue func(vhost, queue string) bool
	// ExplicitDLQ marks queues as DLQs by configuration (dlq_queues); nil
	// marks none.
	ExplicitDLQ func(vhost, queue string) bool
	// DLQNamePattern marks queues as DLQs by name; nil disables it.
	DLQNamePattern *regexp.Regexp
	// ExplicitQueues are measured over AMQP alone when there is no
	// management URL, or while the management API is down. Build them
	// with ParseQueueRef.
	ExplicitQueues []QueueRef
	// ListEvery is how often the management API lists the queues while
	// rabbitmq_prometheus (Cluster.Exporter) serves depths and consumers:
	// every ListEvery-th poll, and whenever the plugin shows queues come or
	// go. 0 means DefaultListEvery; 1 lists every poll.
	ListEvery int
	Logger    *slog.Logger
}

// QueueRef names one queue.
type QueueRef struct {
	VHost string
	Name  string
}

// ParseQueueRef parses "vhost/queue", where the vhost is percent-encoded as
// in management API paths and the queue is everything after the first "/",
// verbatim. So "%2F/orders.dlq" is queue "orders.dlq" in vhost "/", and
// "shop/eu/orders" is queue "eu/orders" in vhost "shop".
func ParseQueueRef(s string) (QueueRef, error) {
	vh, name, ok := strings.Cut(s, "/")
	if !ok || vh == "" || name == "" {
		return QueueRef{}, fmt.Errorf("queue %q: want vhost/queue with the vhost percent-encoded (%%2F for /)", s)
	}
	vhost, err := url.PathUnescape(vh)
	if err != nil {
		return QueueRef{}, fmt.Errorf("queue %q: vhost: %w", s, err)
	}
	return QueueRef{VHost: vhost, Name: name}, nil
}

// String formats r the way ParseQueueRef reads it.
func (r QueueRef) String() string { return url.PathEscape(r.VHost) + "/" + r.Name }

// Source polls one RabbitMQ cluster. It is safe for one poll at a time; the
// scheduler never runs two polls of one source concurrently.
type Source struct {
	opts Options
	log  *slog.Logger
	mgmt *rabbit.Client // nil in AMQP-only mode
	// exporter reads rabbitmq_prometheus; nil without the plugin.
	exporter *rabbit.Exporter
	amqp     *amqpPool
	now      func() time.Time

	mu sync.Mutex
	// known are the DLQs of the last successful management poll, measured
	// over AMQP while the management API is down.
	known []plan
	// routed are the routed queues of the last management poll, whose
	// topology the next poll reads while it lists queues.
	routed []routed
	// backlogs are the DLQs' backlogs as of the last poll, for estimating
	// oldest ages.
	backlogs map[vhostName]backlog
	version  string // the broker's, as last logged
	plugin   pluginState
}

// New creates a source; it does not connect until the first poll.
func New(opts Options) (*Source, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Cluster == nil {
		return nil, errors.New("rabbitmq source: no cluster")
	}
	s := &Source{
		opts:     opts,
		log:      opts.Logger.With("broker", "rabbitmq", "cluster", opts.Cluster.Name()),
		mgmt:     opts.Cluster.Management(),
		exporter: opts.Cluster.Exporter(),
		now:      time.Now,
	}
	s.amqp = newAMQPPool(opts.Cluster, s.log)
	return s, nil
}

// Broker returns queue.RabbitMQ.
func (s *Source) Broker() queue.Broker { return queue.RabbitMQ }

// Cluster returns the configured cluster name.
func (s *Source) Cluster() string { return s.opts.Cluster.Name() }

// HTTPRequests returns how many management API requests the cluster's
// client made: this source's alone unless another user (a replay backend)
// shares the access.
func (s *Source) HTTPRequests() int64 {
	if s.mgmt == nil {
		return 0
	}
	return s.mgmt.Requests()
}

// Close closes the AMQP connections.
func (s *Source) Close() { s.amqp.close() }

// Check verifies that the management API (when configured) accepts the
// credentials and that AMQP accepts a connection to the URL's vhost.
func (s *Source) Check(ctx context.Context) error {
	if s.mgmt != nil {
		if err := s.mgmt.WhoAmI(ctx); err != nil {
			return fmt.Errorf("rabbitmq %s: %w", s.Cluster(), err)
		}
	}
	vhost := s.opts.Cluster.VHost()
	vc, err := s.amqp.vhost(vhost)
	if err != nil {
		return fmt.Errorf("rabbitmq %s: %w", s.Cluster(), err)
	}
	if !vc.work.TryLock() {
		return nil // a poll is using the connection right now
	}
	defer vc.work.Unlock()
	if _, _, err := s.amqp.channel(ctx, vc, vhost); err != nil {
		return fmt.Errorf("rabbitmq %s: amqp %s: %w", s.Cluster(), s.opts.Cluster.URL(), err)
	}
	return nil
}

// Poll reads the cluster once. It returns an error when nothing could be
// read: wrong management credentials, or neither the management API nor
// AMQP answering for any known DLQ.
func (s *Source) Poll(ctx context.Context) (*queue.Snapshot, error) {
	start := s.now()
	snap := &queue.Snapshot{Broker: queue.RabbitMQ, Cluster: s.Cluster(), Time: start}
	s.noteVersion(ctx)
	var err error
	if s.mgmt == nil {
		err = s.pollAMQPOnly(ctx, snap, nil)
	} else {
		err = s.pollManagement(ctx, snap)
	}
	if err != nil {
		return nil, fmt.Errorf("rabbitmq %s: %w", s.Cluster(), err)
	}
	snap.Duration = s.now().Sub(start)
	return snap, nil
}

// noteVersion reads the broker's version (cached by the cluster access,
// so one management request at the first poll and every ten minutes),
// which browsing needs for RabbitMQ 4's default quorum delivery limit, and
// logs it when it changes.
func (s *Source) noteVersion(ctx context.Context) {
	v := s.opts.Cluster.Version(ctx)
	s.mu.Lock()
	changed := v != "" && v != s.version
	if changed {
		s.version = v
	}
	s.mu.Unlock()
	if changed {
		s.log.Info("rabbitmq version", "version", v, "quorum_default_delivery_limit", rabbit.DefaultsToDeliveryLimit(v))
	}
}

func (s *Source) pollManagement(ctx context.Context, snap *queue.Snapshot) error {
	v, err := s.readView(ctx, snap.Time)
	if err != nil {
		s.mu.Lock()
		known := s.known
		s.mu.Unlock()
		if errors.Is(err, rabbit.ErrUnauthorized) || ctx.Err() != nil ||
			len(known) == 0 && len(s.opts.ExplicitQueues) == 0 {
			return err
		}
		s.log.Warn("management API unavailable, measuring known DLQs over AMQP", "err", err)
		snap.Partial = append(snap.Partial, "management API unavailable: "+err.Error())
		return s.pollAMQPOnly(ctx, snap, known)
	}
	snap.Partial = append(snap.Partial, v.partial...)
	queues, plans := build(s.opts, v, snap.Time)
	s.mu.Lock()
	s.known = plans
	s.mu.Unlock()
	if _, refused := s.measure(ctx, snap, plans, queues); refused != nil {
		return refused
	}
	snap.Queues = queues
	s.reportMissing(snap, listedIn(v.queues))
	return nil
}

// pollAMQPOnly measures the explicit queues and the known DLQs over AMQP.
func (s *Source) pollAMQPOnly(ctx context.Context, snap *queue.Snapshot, known []plan) error {
	plans := amqpOnlyPlans(s.opts, known)
	if len(plans) == 0 {
		return errors.New("no management url and no queue names in dlq_queues (re: patterns need the management API): nothing to measure")
	}
	queues := make([]queue.Queue, len(plans))
	for i, p := range plans {
		queues[i] = queue.Queue{Cluster: s.Cluster(), VHost: p.vhost, Name: p.name, Type: p.typ}
	}
	failed, refused := s.measure(ctx, snap, plans, queues)
	if refused != nil {
		return refused
	}
	if failed == len(plans) {
		return fmt.Errorf("amqp %s: no queue could be measured: %s", s.opts.Cluster.URL(), strings.Join(snap.Partial, "; "))
	}
	for i := range queues {
		if !plans[i].missing {
			snap.Queues = append(snap.Queues, queues[i])
		}
	}
	s.reportMissing(snap, measuredIn(plans))
	return nil
}
