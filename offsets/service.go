package offsets

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// Store is what the Service keeps in the store every process shares (the
// audit store implements it): the record of each apply, pause and resume,
// the leases that make applies of one group run one at a time across
// processes, the plans the API issued and the pauses made through it. The
// Service decides what is kept and when; the Store only keeps it.
type Store interface {
	// Record records r and returns its id.
	Record(ctx context.Context, r Record) (int64, error)
	// Finish replaces the result and entry of the record id.
	Finish(ctx context.Context, id int64, result string, entry json.RawMessage) error
	// Lease takes or renews cluster's group for holder until now+ttl. It
	// fails, wrapping ErrBusy, while another holder has it.
	Lease(ctx context.Context, cluster, group, holder string, now time.Time, ttl time.Duration) error
	// Release gives up holder's lease of cluster's group.
	Release(ctx context.Context, cluster, group, holder string) error
	// PutPlan keeps p for ttl, under maxPlans (the oldest goes first).
	PutPlan(ctx context.Context, p KeptPlan, ttl time.Duration, maxPlans int) error
	// Plan returns the kept plan id of cluster's group: ErrUnknownPlan
	// when none is kept, ErrPlanExpired when kept longer than ttl.
	Plan(ctx context.Context, id, cluster, group string, now time.Time, ttl time.Duration) (KeptPlan, error)
	// DropPlan forgets plan id.
	DropPlan(ctx context.Context, id string) error
	// PutPause keeps p for keep, replacing the group's previous one.
	PutPause(ctx context.Context, p KeptPause, keep time.Duration) error
	// Pause returns the last pause or resume kept of the group.
	Pause(ctx context.Context, broker, cluster, group string) (KeptPause, bool, error)
}

// Record is one line of the reset log: an apply (its Entry the plan and
// receipt), a pause or a resume (its Entry a pauseEntry).
type Record struct {
	At      time.Time
	Who     string
	Broker  string
	Cluster string
	Group   string
	PlanID  string
	Result  string
	Entry   json.RawMessage
}

// KeptPlan is a plan the API issued, as the Store keeps it.
type KeptPlan struct {
	ID, Broker, Cluster, Group string
	Plan                       json.RawMessage
	Created                    time.Time
}

// KeptPause is a pause or resume made through the Service, as the Store
// keeps it for the consumer pages.
type KeptPause struct {
	Broker, Cluster, Group string
	Paused                 bool
	Until, At              time.Time
}

// Service is the offset resets and pauses a process offers (serve through
// its API and UI, the CLI for one apply): it picks the Broker of a
// request's cluster, plans, applies under the Store's lease with the apply
// recorded, and keeps what any replica sharing the Store must find (issued
// plans, recent pauses). It holds no state of its own but its brokers.
type Service struct {
	all     []Broker
	store   Store
	metrics *Metrics
}

// NewService is the service over the resets of all (every configured
// cluster that offers them) and store; metrics may be nil.
func NewService(all []Broker, store Store, metrics *Metrics) *Service {
	return &Service{all: all, store: store, metrics: metrics}
}

// Plan plans req on Kafka cluster cluster (a consumer group, or a share
// group by req.Kind); it changes nothing. A cluster is named by broker and
// name: a NATS cluster of the same name (the demo has one) is another.
func (s *Service) Plan(ctx context.Context, cluster string, req Request) (Plan, error) {
	return s.PlanOn(ctx, string(queue.Kafka), cluster, req)
}

// PlanOn plans req on the cluster of broker brokerName ("" for whichever
// broker has it), for pages that know their broker (a JetStream
// consumer's), so a Kafka and a NATS cluster may share a name.
func (s *Service) PlanOn(ctx context.Context, brokerName, cluster string, req Request) (Plan, error) {
	b, err := Pick(s.all, brokerName, req.Kind, cluster)
	if err != nil {
		return Plan{}, err
	}
	return MakePlan(ctx, b, req, time.Now())
}

// Apply applies plan as who, recorded in the store and counted.
func (s *Service) Apply(ctx context.Context, plan Plan, who string) (Receipt, error) {
	b, err := Pick(s.all, plan.Broker, plan.Kind, plan.Cluster)
	if err != nil {
		return Receipt{}, err
	}
	log := storeLog{s.store}
	return Apply(ctx, b, plan, ApplyOptions{Who: who, Audit: log, Lock: log, Metrics: s.metrics})
}

// KeepPlan keeps plan, issued through the API, in the store, so its apply
// (which names only its ID) works through any replica sharing the store:
// for PlanTTL, under MaxPlans.
func (s *Service) KeepPlan(ctx context.Context, plan Plan) error {
	js, err := json.Marshal(plan)
	if err != nil {
		return fmt.Errorf("keep plan %s: %w", plan.ID, err)
	}
	return s.store.PutPlan(ctx, KeptPlan{
		ID: plan.ID, Broker: plan.Broker, Cluster: plan.Cluster, Group: plan.Group, Plan: js, Created: time.Now(),
	}, PlanTTL, MaxPlans)
}

// IssuedPlan returns the kept plan id of cluster's group, whichever
// replica issued it: ErrUnknownPlan when the store keeps none of that
// group, ErrPlanExpired past PlanTTL.
func (s *Service) IssuedPlan(ctx context.Context, id, cluster, group string) (Plan, error) {
	kept, err := s.store.Plan(ctx, id, cluster, group, time.Now(), PlanTTL)
	if err != nil {
		return Plan{}, err
	}
	var plan Plan
	if err := json.Unmarshal(kept.Plan, &plan); err != nil {
		return Plan{}, fmt.Errorf("read plan %s: %w", id, err)
	}
	return plan, nil
}

// DropPlan forgets plan id once applied: a plan commits once.
func (s *Service) DropPlan(ctx context.Context, id string) error {
	return s.store.DropPlan(ctx, id)
}

// errNoCluster is returned for a cluster no broker with offset resets has.
// It also matches queue.ErrNotFound, which the API answers 404, without
// changing the CLI's message.
var errNoCluster error = notFound("no such cluster")

// notFound is an error that matches queue.ErrNotFound.
type notFound string

func (e notFound) Error() string { return string(e) }

func (notFound) Is(target error) bool { return target == queue.ErrNotFound }

// Pick is the one of all that is cluster, of broker brokerName (any broker
// when "") and for groups of kind ("" for consumer groups). None is an
// error matching queue.ErrNotFound.
func Pick(all []Broker, brokerName, kind, cluster string) (Broker, error) {
	var found []Broker
	for _, b := range all {
		if b.Cluster() == cluster && (brokerName == "" || b.Broker() == brokerName) && KindOf(b) == kind {
			found = append(found, b)
		}
	}
	switch len(found) {
	case 0:
		if kind != "" {
			return nil, fmt.Errorf("%w %q with %s group resets in the config (they are offered for Kafka clusters)", errNoCluster, cluster, kind)
		}
		return nil, fmt.Errorf("%w %q with offset resets in the config (resets are offered for Kafka and NATS clusters)", errNoCluster, cluster)
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("cluster %q is configured for more than one broker with offset resets", cluster)
}

// storeLog records applies in the store, the plan and receipt kept as
// their JSON: a record with result "applying" before the commit, updated
// with the end result after it. It also takes the group's lease.
type storeLog struct{ store Store }

func (l storeLog) Begin(ctx context.Context, e Entry) (int64, error) {
	entry, err := json.Marshal(e)
	if err != nil {
		return 0, err
	}
	return l.store.Record(ctx, Record{
		At: e.Receipt.At, Who: e.Receipt.Who, Broker: e.Plan.Broker, Cluster: e.Plan.Cluster, Group: e.Plan.Group,
		PlanID: e.Plan.ID, Result: string(e.Receipt.Result), Entry: entry,
	})
}

func (l storeLog) Finish(ctx context.Context, id int64, e Entry) error {
	entry, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return l.store.Finish(ctx, id, string(e.Receipt.Result), entry)
}

// leaseTTL is how long a lease on a group outlives its holder: a crashed
// apply blocks the group's next one for at most this long. The holder
// renews it every leaseTTL/3 while its apply runs.
const leaseTTL = 30 * time.Second

// Lock takes the group's lease in the store, so that processes sharing it
// (a CLI apply beside serve, replicas of serve) apply resets of one group
// one at a time, and renews it until unlock.
func (l storeLog) Lock(ctx context.Context, cluster, group string) (func(), error) {
	holder := leaseHolder()
	if err := l.store.Lease(ctx, cluster, group, holder, time.Now(), leaseTTL); err != nil {
		if errors.Is(err, ErrBusy) {
			return nil, fmt.Errorf("%w; re-plan once it ends", err)
		}
		return nil, err
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { l.renew(done, cluster, group, holder) })
	return func() {
		close(done)
		wg.Wait()
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// A release that fails leaves the lease to expire.
		_ = l.store.Release(rctx, cluster, group, holder)
	}, nil
}

// renew renews holder's lease every leaseTTL/3 until done is closed.
func (l storeLog) renew(done <-chan struct{}, cluster, group, holder string) {
	t := time.NewTicker(leaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			// A failed renewal leaves the lease to expire; the apply,
			// already under way, is not cut off for it.
			rctx, cancel := context.WithTimeout(context.Background(), leaseTTL/3)
			_ = l.store.Lease(rctx, cluster, group, holder, time.Now(), leaseTTL)
			cancel()
		}
	}
}

// leaseHolder names this apply in a lease, and in the refusal of another
// apply that meets it: host, process and a random part for the apply.
func leaseHolder() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s pid %d (%s)", host, os.Getpid(), hex.EncodeToString(b))
}
