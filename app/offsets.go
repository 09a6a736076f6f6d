package app

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/store"
)

// PlanOffsets plans an offset reset of a group of cluster, as
// `queuewatch offsets plan` does. It changes nothing.
func PlanOffsets(ctx context.Context, cfg *config.Config, cluster string, req offsets.Request) (offsets.Plan, error) {
	svc, closeAll, err := cliResets(cfg, nil)
	if err != nil {
		return offsets.Plan{}, err
	}
	defer closeAll()
	return svc.PlanOn(ctx, "", cluster, req)
}

// ApplyOffsets applies a plan, as `queuewatch offsets apply` does: refused
// unless the group is Empty or Dead and every offset is still the plan's.
// The apply is recorded in the audit store (config audit) whatever its
// result; a store that cannot be opened refuses the apply, since a reset
// nobody can trace afterwards is not one to make.
func ApplyOffsets(ctx context.Context, cfg *config.Config, plan offsets.Plan, who string) (offsets.Receipt, error) {
	st, err := openAudit(ctx, cfg)
	if err != nil {
		return offsets.Receipt{}, err
	}
	defer func() { _ = st.Close() }()
	svc, closeAll, err := cliResets(cfg, store.ResetStore{S: st})
	if err != nil {
		return offsets.Receipt{}, err
	}
	defer closeAll()
	return svc.Apply(ctx, plan, who)
}

// OffsetResets lists the newest limit applies recorded in the audit
// store, of one cluster's group (either may be "" for all).
func OffsetResets(ctx context.Context, cfg *config.Config, cluster, group string, limit int) ([]store.OffsetReset, error) {
	st, err := openAudit(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() { _ = st.Close() }()
	return st.OffsetResets(ctx, cluster, group, limit)
}

// cliResets is the reset service of one CLI command over store (nil for
// a plan, which records nothing), with the access of every configured
// cluster that offers resets; the returned func closes it.
func cliResets(cfg *config.Config, st offsets.Store) (*offsets.Service, func(), error) {
	access, err := newBrokers(cfg)
	if err != nil {
		return nil, nil, err
	}
	all, closeAll, err := allResets(access)
	if err != nil {
		return nil, nil, err
	}
	return offsets.NewService(all, st, nil), closeAll, nil
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

// resetService is the offset resets serve offers through the API and UI:
// offsets.Service over the access of every cluster with resets, built
// once, and the audit store the replay service opened, so replays and
// resets are recorded in one place; and the reset log's listing, which is
// the store's.
type resetService struct {
	*offsets.Service
	close func()
	store *store.Store
}

// newResetService builds the reset access of every cluster that offers
// resets, over store, and registers queuewatch_offset_resets_total with
// reg. Close it with its close func.
func newResetService(access opened, st *store.Store, reg prometheus.Registerer) (*resetService, error) {
	m, err := offsets.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	all, closeAll, err := allResets(access)
	if err != nil {
		return nil, err
	}
	svc := offsets.NewService(all, store.ResetStore{S: st}, m)
	return &resetService{Service: svc, close: closeAll, store: st}, nil
}

// Resets lists the newest applies and pauses q selects.
func (s *resetService) Resets(ctx context.Context, q store.ResetQuery) ([]store.OffsetReset, error) {
	return s.store.FindOffsetResets(ctx, q)
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
