package app

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

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay/audit"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
)

// PlanOffsets plans an offset reset of a group of cluster, as
// `queuewatch offsets plan` does. It changes nothing.
func PlanOffsets(ctx context.Context, cfg *config.Config, cluster string, req offsets.Request) (offsets.Plan, error) {
	b, closeAll, err := resetAccess(cfg, "", req.Kind, cluster)
	if err != nil {
		return offsets.Plan{}, err
	}
	defer closeAll()
	return offsets.MakePlan(ctx, b, req, time.Now())
}

// ApplyOffsets applies a plan, as `queuewatch offsets apply` does: refused
// unless the group is Empty or Dead and every offset is still the plan's.
// The apply is recorded in the audit store (config audit) whatever its
// result; a store that cannot be opened refuses the apply, since a reset
// nobody can trace afterwards is not one to make.
func ApplyOffsets(ctx context.Context, cfg *config.Config, plan offsets.Plan, who string) (offsets.Receipt, error) {
	store, err := openAudit(ctx, cfg)
	if err != nil {
		return offsets.Receipt{}, err
	}
	defer func() { _ = store.Close() }()
	b, closeAll, err := resetAccess(cfg, plan.Broker, plan.Kind, plan.Cluster)
	if err != nil {
		return offsets.Receipt{}, err
	}
	defer closeAll()
	log := resetLog{store}
	return offsets.Apply(ctx, b, plan, offsets.ApplyOptions{Who: who, Audit: log, Lock: log})
}

// OffsetResets lists the newest limit applies recorded in the audit
// store, of one cluster's group (either may be "" for all).
func OffsetResets(ctx context.Context, cfg *config.Config, cluster, group string, limit int) ([]audit.OffsetReset, error) {
	store, err := openAudit(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() { _ = store.Close() }()
	return store.OffsetResets(ctx, cluster, group, limit)
}

// resetLog records offset-reset applies in the audit store, the plan and
// receipt kept as their JSON: a row with result "applying" before the
// commit, updated with the end result after it.
type resetLog struct{ store *audit.Store }

func (l resetLog) Begin(ctx context.Context, e offsets.Entry) (int64, error) {
	entry, err := json.Marshal(e)
	if err != nil {
		return 0, err
	}
	return l.store.RecordOffsetReset(ctx, audit.OffsetReset{
		At: e.Receipt.At, Who: e.Receipt.Who, Broker: e.Plan.Broker, Cluster: e.Plan.Cluster, Group: e.Plan.Group,
		PlanID: e.Plan.ID, Result: string(e.Receipt.Result), Entry: entry,
	})
}

func (l resetLog) Finish(ctx context.Context, id int64, e offsets.Entry) error {
	entry, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return l.store.FinishOffsetReset(ctx, id, string(e.Receipt.Result), entry)
}

// leaseTTL is how long a lease on a group outlives its holder: a crashed
// apply blocks the group's next one for at most this long. The holder
// renews it every leaseTTL/3 while its apply runs.
const leaseTTL = 30 * time.Second

// Lock takes the group's lease in the audit store, so that processes
// sharing it (a CLI apply beside serve, replicas of serve) apply resets
// of one group one at a time, and renews it until unlock.
func (l resetLog) Lock(ctx context.Context, cluster, group string) (func(), error) {
	holder := leaseHolder()
	if err := l.store.LeaseOffsetReset(ctx, cluster, group, holder, time.Now(), leaseTTL); err != nil {
		if errors.Is(err, audit.ErrLeaseHeld) {
			return nil, fmt.Errorf("%w: %w; re-plan once it ends", offsets.ErrBusy, err)
		}
		return nil, err
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
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
				_ = l.store.LeaseOffsetReset(rctx, cluster, group, holder, time.Now(), leaseTTL)
				cancel()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// A release that fails leaves the lease to expire.
		_ = l.store.ReleaseOffsetReset(rctx, cluster, group, holder)
	}, nil
}

// leaseHolder names this apply in a lease, and in the refusal of another
// apply that meets it: host, process and a random part for the apply.
func leaseHolder() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s pid %d (%s)", host, os.Getpid(), hex.EncodeToString(b))
}

// errNoCluster is returned for a cluster no broker with offset resets has
// in the config. It also matches queue.ErrNotFound, which the API answers
// 404, without changing the CLI's message.
var errNoCluster error = notFound("no such cluster")

// notFound is an error that matches queue.ErrNotFound.
type notFound string

func (e notFound) Error() string { return string(e) }

func (notFound) Is(target error) bool { return target == queue.ErrNotFound }

// resetAccess is the offset-reset access of the configured cluster named
// cluster, of broker brokerName (any broker with resets when "") for groups
// of kind (offsets.Kinded; "" for consumer groups). The returned func
// closes it.
func resetAccess(cfg *config.Config, brokerName, kind, cluster string) (offsets.Broker, func(), error) {
	access, err := newBrokers(cfg)
	if err != nil {
		return nil, nil, err
	}
	all, closeAll, err := allResets(access)
	if err != nil {
		return nil, nil, err
	}
	b, err := pickReset(all, brokerName, kind, cluster)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return b, closeAll, nil
}

// allResets builds the offset-reset access of every configured cluster of
// every broker that offers resets; the returned func closes them.
func allResets(access opened) ([]offsets.Broker, func(), error) {
	var all []offsets.Broker
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, w := range access {
		if w.resets == nil {
			continue
		}
		bs, closeThem, err := w.resets()
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		closers = append(closers, closeThem)
		all = append(all, bs...)
	}
	return all, closeAll, nil
}

// pickReset is the one of all that is cluster, of broker brokerName (any
// broker when "") and for groups of kind.
func pickReset(all []offsets.Broker, brokerName, kind, cluster string) (offsets.Broker, error) {
	var found []offsets.Broker
	for _, b := range all {
		if b.Cluster() == cluster && (brokerName == "" || b.Broker() == brokerName) && offsets.KindOf(b) == kind {
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

// resetService is the offset resets serve offers through the API and UI:
// the access of every cluster with resets, built once, and the audit
// store the replay service opened, so replays and resets are recorded in
// one place.
type resetService struct {
	all     []offsets.Broker
	close   func()
	store   *audit.Store
	metrics *offsets.Metrics
}

// newResetService builds the reset access of every cluster that offers
// resets, over store, and registers queuewatch_offset_resets_total with
// reg. Close it with its close func.
func newResetService(access opened, store *audit.Store, reg prometheus.Registerer) (*resetService, error) {
	m, err := offsets.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	all, closeAll, err := allResets(access)
	if err != nil {
		return nil, err
	}
	return &resetService{all: all, close: closeAll, store: store, metrics: m}, nil
}

// Plan plans req on Kafka cluster cluster (a consumer group, or a share
// group by req.Kind); it changes nothing. A cluster is named by broker and
// name: a NATS cluster of the same name (the demo has one) is another.
func (s *resetService) Plan(ctx context.Context, cluster string, req offsets.Request) (offsets.Plan, error) {
	b, err := pickReset(s.all, string(queue.Kafka), req.Kind, cluster)
	if err != nil {
		return offsets.Plan{}, err
	}
	return offsets.MakePlan(ctx, b, req, time.Now())
}

// Apply applies plan as who, recorded in the audit store and counted.
func (s *resetService) Apply(ctx context.Context, plan offsets.Plan, who string) (offsets.Receipt, error) {
	b, err := pickReset(s.all, plan.Broker, plan.Kind, plan.Cluster)
	if err != nil {
		return offsets.Receipt{}, err
	}
	log := resetLog{s.store}
	return offsets.Apply(ctx, b, plan, offsets.ApplyOptions{Who: who, Audit: log, Lock: log, Metrics: s.metrics})
}

// Resets lists the newest limit applies of one cluster's group (either may
// be "" for all).
func (s *resetService) Resets(ctx context.Context, q audit.ResetQuery) ([]audit.OffsetReset, error) {
	return s.store.FindOffsetResets(ctx, q)
}

// KeepPlan keeps plan, issued through the API, in the audit store, so its
// apply (which names only its ID) works through any replica sharing the
// store: for offsets.PlanTTL, under offsets.MaxPlans.
func (s *resetService) KeepPlan(ctx context.Context, plan offsets.Plan) error {
	js, err := json.Marshal(plan)
	if err != nil {
		return fmt.Errorf("keep plan %s: %w", plan.ID, err)
	}
	return s.store.PutOffsetPlan(ctx, audit.OffsetPlan{
		ID: plan.ID, Broker: plan.Broker, Cluster: plan.Cluster, Group: plan.Group, Plan: js, Created: time.Now(),
	}, offsets.PlanTTL, offsets.MaxPlans)
}

// IssuedPlan returns the kept plan id of cluster's group, whichever
// replica issued it: offsets.ErrUnknownPlan when the store keeps none of
// that group, offsets.ErrPlanExpired past offsets.PlanTTL.
func (s *resetService) IssuedPlan(ctx context.Context, id, cluster, group string) (offsets.Plan, error) {
	kept, err := s.store.OffsetPlan(ctx, id, cluster, group, time.Now(), offsets.PlanTTL)
	switch {
	case errors.Is(err, audit.ErrNoPlan):
		return offsets.Plan{}, offsets.ErrUnknownPlan
	case errors.Is(err, audit.ErrPlanExpired):
		return offsets.Plan{}, offsets.ErrPlanExpired
	case err != nil:
		return offsets.Plan{}, err
	}
	var plan offsets.Plan
	if err := json.Unmarshal(kept.Plan, &plan); err != nil {
		return offsets.Plan{}, fmt.Errorf("read plan %s: %w", id, err)
	}
	return plan, nil
}

// DropPlan forgets plan id once applied: a plan commits once.
func (s *resetService) DropPlan(ctx context.Context, id string) error {
	return s.store.DropOffsetPlan(ctx, id)
}

// pauseKeep is how long the audit store keeps a pause made through serve
// for the consumer pages: far longer than any poll interval, so every
// snapshot polled since has seen it.
const pauseKeep = 24 * time.Hour

// RecentPause returns the last pause or resume of group of brokerName's
// cluster made through any replica sharing the store, when it was made
// after polled (a snapshot polled at or after it shows it already).
func (s *resetService) RecentPause(ctx context.Context, brokerName, cluster, group string, polled time.Time) (offsets.PauseState, bool, error) {
	p, ok, err := s.store.ConsumerPause(ctx, brokerName, cluster, group)
	if err != nil || !ok || !polled.Before(p.At) {
		return offsets.PauseState{}, false, err
	}
	return offsets.PauseState{Paused: p.Paused, Until: p.Until}, true, nil
}

// eachReset builds the offset-reset access of every item of a config
// section; the returned func closes what was built.
func eachReset[C any, R interface {
	offsets.Broker
	Close()
}](section []C, build func(C) (R, error)) ([]offsets.Broker, func(), error) {
	var out []offsets.Broker
	closeAll := func() {
		for _, b := range out {
			b.(interface{ Close() }).Close()
		}
	}
	for _, c := range section {
		r, err := build(c)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		out = append(out, r)
	}
	return out, closeAll, nil
}

// PlanOn plans req on the cluster of broker brokerName, for pages that
// know their broker (a JetStream consumer's), so a Kafka and a NATS
// cluster may share a name.
func (s *resetService) PlanOn(ctx context.Context, brokerName, cluster string, req offsets.Request) (offsets.Plan, error) {
	b, err := pickReset(s.all, brokerName, req.Kind, cluster)
	if err != nil {
		return offsets.Plan{}, err
	}
	return offsets.MakePlan(ctx, b, req, time.Now())
}

// Pause pauses group of brokerName's cluster until until, as who; the
// pause is recorded in the audit store beside the resets.
func (s *resetService) Pause(ctx context.Context, brokerName, cluster, group string, until time.Time, who string) (offsets.PauseState, error) {
	return s.pause(ctx, brokerName, cluster, group, who, "pause", func(p offsets.Pauser) (offsets.PauseState, error) {
		return p.Pause(ctx, group, until)
	})
}

// Resume resumes group of brokerName's cluster at once, as who; audited.
func (s *resetService) Resume(ctx context.Context, brokerName, cluster, group, who string) (offsets.PauseState, error) {
	return s.pause(ctx, brokerName, cluster, group, who, "resume", func(p offsets.Pauser) (offsets.PauseState, error) {
		return p.Resume(ctx, group)
	})
}

// pauseEntry is what the audit log keeps of a pause or resume.
type pauseEntry struct {
	Action string             `json:"action"`
	State  offsets.PauseState `json:"state"`
	Error  string             `json:"error,omitempty"`
}

// pause runs a pause or resume on a broker that has them and records it,
// failures included, with result "paused", "resumed" or "failed". One that
// took effect is also kept for the consumer pages (RecentPause); when the
// store takes neither, ErrAudit says it took effect all the same.
func (s *resetService) pause(ctx context.Context, brokerName, cluster, group, who, action string,
	do func(offsets.Pauser) (offsets.PauseState, error),
) (offsets.PauseState, error) {
	b, err := pickReset(s.all, brokerName, "", cluster)
	if err != nil {
		return offsets.PauseState{}, err
	}
	p, ok := b.(offsets.Pauser)
	if !ok {
		return offsets.PauseState{}, fmt.Errorf("%w: %s readers cannot be paused", offsets.ErrUnsupported, b.Broker())
	}
	at := time.Now().UTC()
	st, err := do(p)
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var kerr error
	if err == nil {
		// Kept for every replica's consumer page until a poll shows it;
		// made at this instant, after the broker took it.
		kerr = s.store.PutConsumerPause(actx, audit.ConsumerPause{
			Broker: b.Broker(), Cluster: cluster, Group: group, Paused: st.Paused, Until: st.Until, At: time.Now(),
		}, pauseKeep)
	}
	e := pauseEntry{Action: action, State: st}
	result := action + "d"
	if err != nil {
		e.Error, result = err.Error(), "failed"
	}
	entry, merr := json.Marshal(e)
	if merr != nil {
		return st, merr
	}
	_, aerr := s.store.RecordOffsetReset(actx, audit.OffsetReset{
		At: at, Who: who, Broker: b.Broker(), Cluster: cluster, Group: group, Result: result, Entry: entry,
	})
	switch {
	case aerr == nil && kerr != nil:
		return st, fmt.Errorf("%w: the %s took effect but the consumer pages show it only after the next poll: %w", offsets.ErrAudit, action, kerr)
	case aerr == nil:
		return st, err
	case err != nil:
		// The action's error is the answer; ErrAudit would say it ran.
		return st, fmt.Errorf("%w (and the failure was not recorded: %v)", err, aerr) //nolint:errorlint // only err is meant to match
	}
	return st, fmt.Errorf("%w: the %s took effect but was not recorded: %w", offsets.ErrAudit, action, aerr)
}

// joinResets builds the resets of each builder, for a broker that offers
// more than one kind of group (Kafka: consumer and share groups); the
// returned func closes them all.
func joinResets(builders ...func() ([]offsets.Broker, func(), error)) ([]offsets.Broker, func(), error) {
	var out []offsets.Broker
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, build := range builders {
		bs, closeThem, err := build()
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		out = append(out, bs...)
		closers = append(closers, closeThem)
	}
	return out, closeAll, nil
}
