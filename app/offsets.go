package app

import (
	"context"
	"encoding/json"
	"fmt"
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
	b, closeAll, err := resetAccess(cfg, "", cluster)
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
	b, closeAll, err := resetAccess(cfg, plan.Broker, plan.Cluster)
	if err != nil {
		return offsets.Receipt{}, err
	}
	defer closeAll()
	return offsets.Apply(ctx, b, plan, offsets.ApplyOptions{Who: who, Audit: resetLog{store}})
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

// errNoCluster is returned for a cluster no broker with offset resets has
// in the config. It also matches queue.ErrNotFound, which the API answers
// 404, without changing the CLI's message.
var errNoCluster error = notFound("no such cluster")

// notFound is an error that matches queue.ErrNotFound.
type notFound string

func (e notFound) Error() string { return string(e) }

func (notFound) Is(target error) bool { return target == queue.ErrNotFound }

// resetAccess is the offset-reset access of the configured cluster named
// cluster, of broker brokerName (any broker with resets when ""). The
// returned func closes it.
func resetAccess(cfg *config.Config, brokerName, cluster string) (offsets.Broker, func(), error) {
	access, err := newBrokers(cfg)
	if err != nil {
		return nil, nil, err
	}
	all, closeAll, err := allResets(access)
	if err != nil {
		return nil, nil, err
	}
	b, err := pickReset(all, brokerName, cluster)
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
// broker when "").
func pickReset(all []offsets.Broker, brokerName, cluster string) (offsets.Broker, error) {
	var found []offsets.Broker
	for _, b := range all {
		if b.Cluster() == cluster && (brokerName == "" || b.Broker() == brokerName) {
			found = append(found, b)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("%w %q with offset resets in the config (resets are offered for Kafka clusters)", errNoCluster, cluster)
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

// Plan plans req on cluster; it changes nothing.
func (s *resetService) Plan(ctx context.Context, cluster string, req offsets.Request) (offsets.Plan, error) {
	b, err := pickReset(s.all, "", cluster)
	if err != nil {
		return offsets.Plan{}, err
	}
	return offsets.MakePlan(ctx, b, req, time.Now())
}

// Apply applies plan as who, recorded in the audit store and counted.
func (s *resetService) Apply(ctx context.Context, plan offsets.Plan, who string) (offsets.Receipt, error) {
	b, err := pickReset(s.all, plan.Broker, plan.Cluster)
	if err != nil {
		return offsets.Receipt{}, err
	}
	return offsets.Apply(ctx, b, plan, offsets.ApplyOptions{Who: who, Audit: resetLog{s.store}, Metrics: s.metrics})
}

// Resets lists the newest limit applies of one cluster's group (either may
// be "" for all).
func (s *resetService) Resets(ctx context.Context, cluster, group string, limit int) ([]audit.OffsetReset, error) {
	return s.store.OffsetResets(ctx, cluster, group, limit)
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
