package auth

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
)

// A principal holds grants: roles everywhere or within a scope (clusters,
// DLQs, readers). Every read and action asks may about the object it
// touches; lists keep what the principal may see (a scoped Monitor,
// scope.go).

// NewPrincipal makes a principal of grants; Role is the highest of them
// (the header shows it; coarse route checks use it).
func NewPrincipal(name, method string, grants []config.Grant) Principal {
	p := Principal{Name: name, Method: method, Grants: grants}
	for _, g := range grants {
		if RoleRank(g.Role) > RoleRank(p.Role) {
			p.Role = g.Role
		}
	}
	return p
}

// groupGrants adds up the grants of a user's groups and the default role.
func groupGrants(groups []string, byGroup map[string]config.Grant, def config.Role) []config.Grant {
	var out []config.Grant
	if def != "" {
		out = append(out, config.Grant{Role: def})
	}
	for _, g := range groups {
		if gr, ok := byGroup[g]; ok {
			out = append(out, gr)
		}
	}
	return out
}

// may reports whether p holds role (or more) for an object of cluster: a
// DLQ (dlq its ID), a reader (reader its ID), or the cluster itself.
func (p Principal) may(role config.Role, cluster, dlq, reader string) bool {
	for _, g := range p.Grants {
		if RoleRank(g.Role) >= RoleRank(role) && (g.Scope == nil || g.Scope.Covers(cluster, dlq, reader)) {
			return true
		}
	}
	return false
}

// scoped reports whether anything p sees is limited by a scope: with a
// viewer grant everywhere it sees everything.
func (p Principal) scoped() bool { return !p.Everywhere(config.RoleViewer) }

// Everywhere reports whether p holds role with no scope.
func (p Principal) Everywhere(role config.Role) bool {
	for _, g := range p.Grants {
		if g.Scope == nil && RoleRank(g.Role) >= RoleRank(role) {
			return true
		}
	}
	return false
}

// MayDLQ is may for a DLQ ID.
func (p Principal) MayDLQ(role config.Role, id string) bool {
	ref, err := queue.ParseDLQID(id)
	if err != nil {
		return p.Everywhere(role)
	}
	return p.may(role, ref.Cluster, id, "")
}

// MayReader is may for a reader.
func (p Principal) MayReader(role config.Role, r queue.Reader) bool {
	return p.may(role, r.Cluster, "", r.ID())
}

// PrincipalOf is the request's principal (the zero Principal, who may
// nothing, when there is none).
func PrincipalOf(ctx context.Context) Principal {
	p, _ := PrincipalFrom(ctx)
	return p
}

// verbs name what a role lets one do, for 403 reasons.
var verbs = map[config.Role]string{config.RoleViewer: "read", config.RoleOperator: "act on", config.RoleAdmin: "delete or restore in"}

// forbidden is the 403 of an object outside the principal's grants.
func forbidden(p Principal, role config.Role, what string) error {
	return echo.NewHTTPError(http.StatusForbidden, fmt.Sprintf("forbidden: %s may not %s %s (no %s grant covers it)", p.Name, verbs[role], what, role))
}

// errNotVisible answers a request for an object the principal may not
// even see: the same 404 as for one that does not exist, naming nothing,
// so that a refusal tells no one what is there (a job's DLQ, another
// team's group).
var errNotVisible = echo.NewHTTPError(http.StatusNotFound, "not found")

// refuse is the answer to a principal without role on an object it may
// (visible) or may not see: 403 with the reason, or errNotVisible.
func refuse(p Principal, role config.Role, what string, visible bool) error {
	if !visible {
		return errNotVisible
	}
	return forbidden(p, role, what)
}

// CheckDLQ lets the request's principal through when it holds role for DLQ
// id; otherwise it answers 403, or 404 when the DLQ is not one it sees.
func CheckDLQ(c echo.Context, role config.Role, id string) error {
	p := PrincipalOf(c.Request().Context())
	if p.MayDLQ(role, id) {
		return nil
	}
	return refuse(p, role, "DLQ "+id, p.MayDLQ(config.RoleViewer, id))
}

// CheckJob is checkDLQ for a job, by its DLQ: a job of a DLQ the principal
// does not see answers as a job that is not there, word for word.
func CheckJob(c echo.Context, role config.Role, j dlqreplay.Job) error {
	p := PrincipalOf(c.Request().Context())
	if p.MayDLQ(role, j.DLQ) {
		return nil
	}
	if !p.MayDLQ(config.RoleViewer, j.DLQ) {
		return echo.NewHTTPError(http.StatusNotFound, fmt.Errorf("job %s: %w", j.ID, dlqreplay.ErrJobNotFound).Error())
	}
	return forbidden(p, role, "DLQ "+j.DLQ)
}

// CheckReader is checkDLQ for a reader.
func CheckReader(c echo.Context, role config.Role, r queue.Reader) error {
	p := PrincipalOf(c.Request().Context())
	if p.MayReader(role, r) {
		return nil
	}
	return refuse(p, role, r.ID(), p.MayReader(config.RoleViewer, r))
}

// mayReset reports whether p holds role for the reader of an offset-reset
// record, whose group is a consumer group, a share group or a JetStream
// consumer's "stream/consumer".
func (p Principal) mayReset(role config.Role, broker, cluster, group string) bool {
	r := queue.Reader{Broker: queue.Broker(broker), Cluster: cluster, Name: group}
	if p.MayReader(role, r) {
		return true
	}
	if stream, name, ok := strings.Cut(group, "/"); ok {
		r.Scope, r.Name = stream, name
		return p.MayReader(role, r)
	}
	return false
}

// SeenDLQs is the filter of the DLQs the request's principal may read, for
// the store's list queries (jobs, archive, body reads) to apply before
// their limit; nil, no filter, for one who reads every DLQ.
func SeenDLQs(c echo.Context) func(dlqID string) bool {
	p := PrincipalOf(c.Request().Context())
	if !p.scoped() {
		return nil
	}
	return func(id string) bool { return p.MayDLQ(config.RoleViewer, id) }
}

// CheckPlanNames holds what a reset plan names besides its own reader to
// what the principal sees: the group a group: spec copies from (whose
// committed offsets and record times the plan shows) and the topics it
// covers. For one who sees only part of the cluster a name it does not
// see answers as a name that does not exist does, so that planning is no
// oracle of another team's groups and topics.
func CheckPlanNames(c echo.Context, m Monitor, own queue.Reader, req offsets.Request) error {
	p := PrincipalOf(c.Request().Context())
	if p.may(config.RoleViewer, own.Cluster, "", "") {
		return nil
	}
	if req.To.Kind == offsets.Group {
		other := own
		other.Name = req.To.Group
		if stream, name, ok := strings.Cut(req.To.Group, "/"); ok && own.Scope != "" {
			other.Scope, other.Name = stream, name
		}
		if !p.MayReader(config.RoleViewer, other) {
			return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("group:%s: no group of that name that you may see", req.To.Group))
		}
	}
	if len(req.Topics) == 0 {
		return nil
	}
	seen := visibleTopics(m, own)
	for _, t := range req.Topics {
		if !seen[t.Topic] {
			return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("topic %s: no topic of that name that a group you may see reads", t.Topic))
		}
	}
	return nil
}

// visibleTopics are the topics (JetStream: streams) that the readers the
// principal sees on own's cluster read, in the last poll (m is the
// principal's view).
func visibleTopics(m Monitor, own queue.Reader) map[string]bool {
	seen := map[string]bool{}
	for _, snap := range m.Snapshots() {
		if snap.Broker != own.Broker || snap.Cluster != own.Cluster {
			continue
		}
		for _, g := range snap.Groups {
			for _, pl := range g.Partitions {
				seen[pl.Topic] = true
			}
		}
		for _, g := range snap.ShareGroups {
			for _, pl := range g.Partitions {
				seen[pl.Topic] = true
			}
		}
		for _, con := range snap.Consumers {
			seen[con.Stream] = true
		}
	}
	return seen
}

// SeenResets is seenDLQs for the resets log: the filter of the readers
// whose resets and pauses the principal may read; nil for one who reads
// every one.
func SeenResets(ctx context.Context) func(broker, cluster, group string) bool {
	p := PrincipalOf(ctx)
	if !p.scoped() {
		return nil
	}
	return func(broker, cluster, group string) bool { return p.mayReset(config.RoleViewer, broker, cluster, group) }
}

// CheckReplay answers 403 unless the principal may run req on DLQ id: an
// operator (admin for delete) of the DLQ and of a named target. A
// principal without operator on the whole cluster is also held, message
// by message, to destinations its grants cover (the route returned):
// an original destination comes from the message's headers, which
// whoever writes to the DLQ controls. A native redrive goes where the
// broker's policy says, unseen, so it needs operator on the cluster.
func CheckReplay(c echo.Context, id string, action dlqreplay.Action, mode dlqreplay.Mode, target string) (func(string) error, error) {
	role := config.RoleOperator
	if action == dlqreplay.ActionDelete {
		role = config.RoleAdmin
	}
	if err := CheckDLQ(c, role, id); err != nil {
		return nil, err
	}
	p := PrincipalOf(c.Request().Context())
	ref, _ := dlqreplay.ParseID(id)
	if action == dlqreplay.ActionDelete || p.may(config.RoleOperator, ref.Cluster, "", "") {
		return nil, nil
	}
	if mode == dlqreplay.ModeNative {
		return nil, forbidden(p, config.RoleOperator, "cluster "+ref.Cluster+" (a native redrive goes where the broker's policy says)")
	}
	mayRoute := func(target string) error {
		// A destination reads as the DLQ's own kind of ID: same broker,
		// cluster and vhost; "/queue" (RabbitMQ's default exchange) is the
		// queue.
		dest := ref
		dest.Name = strings.TrimPrefix(target, "/")
		did := dest.ID()
		if !p.may(config.RoleOperator, ref.Cluster, did, did) {
			return fmt.Errorf("%s may not send to %s: no operator grant covers it", p.Name, did)
		}
		return nil
	}
	// Any name is a named target (the service defaults the kind so).
	if target != "" {
		if err := mayRoute(target); err != nil {
			return nil, echo.NewHTTPError(http.StatusForbidden, "forbidden: "+err.Error())
		}
	}
	return mayRoute, nil
}

// CheckRestore answers 403 unless the principal is an admin of the target
// and of every DLQ the archived messages came from. Only a scoped
// principal pays for the lookup. A failure of svc is returned as it is,
// for the caller to answer.
func CheckRestore(c echo.Context, svc DLQService, target, jobID string, archiveIDs []int64) error {
	p := PrincipalOf(c.Request().Context())
	if p.Everywhere(config.RoleAdmin) {
		return nil
	}
	if err := CheckDLQ(c, config.RoleAdmin, target); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if jobID != "" {
		j, err := svc.Job(ctx, jobID)
		if err != nil {
			return err
		}
		return CheckJob(c, config.RoleAdmin, j)
	}
	rows, err := svc.Archived(ctx, dlqreplay.ArchiveQuery{IDs: archiveIDs, Limit: len(archiveIDs)})
	if err != nil {
		return err
	}
	want := map[int64]bool{}
	for _, id := range archiveIDs {
		want[id] = true
	}
	for _, a := range rows {
		if want[a.ID] {
			if err := CheckDLQ(c, config.RoleAdmin, a.DLQ); err != nil {
				return err
			}
			delete(want, a.ID)
		}
	}
	for id := range want {
		// Not in the archive: the restore finds nothing to restore.
		return echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("archived message %d: %v", id, dlqreplay.ErrJobNotFound))
	}
	return nil
}
