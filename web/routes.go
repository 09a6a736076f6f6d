package web

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/auth"
	"github.com/queuewatch/queuewatch/web/view"
)

// A need is what a route asks of the request's principal, declared once
// in the route table (as Grafana declares each route's permission): public
// (no credentials), or a role — anywhere, for a list or a form whose
// objects the view filters and web/auth checks, or on the object that the
// path names. A route without a need does not start (mustNeed).
type need struct {
	public bool
	role   config.Role
	object object
}

// object is what a route's path names: a DLQ, a job, or one reader of a
// kind (the kind's view.Path reads it from the parameters).
type object struct {
	kind   objectKind
	reader view.Path
}

type objectKind int

const (
	anyObject    objectKind = iota // a list, a form or a page of many: the view filters them
	dlqObject                      // :id, a DLQ ID
	jobObject                      // :job, a job, by its DLQ
	readerObject                   // a reader, named as its kind's Path says
)

var (
	public   = need{public: true}
	viewer   = need{role: config.RoleViewer}
	operator = need{role: config.RoleOperator}
	admin    = need{role: config.RoleAdmin}

	aDLQ = object{kind: dlqObject}
	aJob = object{kind: jobObject}
)

// on is n on the object the path names.
func (n need) on(o object) need { n.object = o; return n }

// reader is the object a path names for a reader of kind k.
func reader(k view.Lister) object { return object{kind: readerObject, reader: k.ReaderPath()} }

// route is one line of the route table.
type route struct {
	method, path string
	handler      echo.HandlerFunc
	need         need
}

// routes is the route table: every path the server answers, with its
// need. API paths are under /api/v1.
func (s *Server) routes() []route {
	rs := []route{
		{"GET", "/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok\n") }, public},
		{"GET", "/readyz", s.readyz, public},
		{"GET", "/metrics", echo.WrapHandler(s.opts.Metrics), public},
		{"GET", "/static/*", echo.WrapHandler(staticHandler()), public},

		// Pages.
		{"GET", "/", s.ui.Overview, viewer},
		{"GET", "/outbox/:source", s.ui.OutboxPage, viewer},
		{"GET", "/dlq/:id", s.ui.DLQPage, viewer.on(aDLQ)},
		{"GET", "/replays", s.ui.ReplaysPage, viewer},
		{"GET", "/search", s.ui.SearchPage, viewer},

		// Readers beyond their kind's page, list and history (readerRoutes).
		{"GET", "/api/v1/groups/:cluster/:group", s.api.Group, viewer.on(reader(&view.Groups))},
		{"GET", "/api/v1/rabbitmq/queues/:cluster/:vhost/:queue", s.api.RabbitQueue, viewer.on(reader(&view.Queues))},
		{"GET", "/api/v1/outbox", s.api.Outbox, viewer},
		{"GET", "/api/v1/outbox/:source/history", s.api.OutboxHistory, viewer},
		{"GET", "/api/v1/sources", s.api.Sources, viewer},
		{"GET", "/api/v1/openapi.json", s.api.OpenAPI, viewer},

		// Dead letters. Replay and move need an operator, delete an admin:
		// checkReplay reads the action from the body.
		{"GET", "/api/v1/dlqs", s.api.DLQs, viewer},
		{"GET", "/api/v1/dlqs/:id/messages", s.api.DLQMessages, viewer.on(aDLQ)},
		{"GET", "/api/v1/dlqs/:id/messages/:msg", s.api.DLQMessage, viewer.on(aDLQ)},
		{"GET", "/api/v1/dlqs/:id/messages/:msg/body", s.api.DLQBody, viewer.on(aDLQ)},
		{"POST", "/api/v1/dlqs/:id/replay", s.api.DLQReplay, operator.on(aDLQ)},
		{"POST", "/api/v1/dlqs/:id/preview", s.api.DLQPreview, operator.on(aDLQ)},
		{"GET", "/api/v1/dlqs/:id/filters", s.api.DLQFilters, viewer.on(aDLQ)},
		{"PUT", "/api/v1/dlqs/:id/filters/:name", s.api.SaveDLQFilter, operator.on(aDLQ)},
		{"DELETE", "/api/v1/dlqs/:id/filters/:name", s.api.DeleteDLQFilter, operator.on(aDLQ)},
		{"GET", "/api/v1/replays/:job", s.api.Replay, viewer.on(aJob)},
		{"DELETE", "/api/v1/replays/:job", s.api.CancelReplay, operator.on(aJob)},
		{"GET", "/api/v1/search", s.api.Search, viewer}, // every DLQ the viewer may read
		{"GET", "/api/v1/audit", s.api.Audit, viewer},
		{"GET", "/api/v1/archive", s.api.Archive, viewer},
		{"POST", "/api/v1/archive/restore", s.api.Restore, admin}, // checkRestore: the target and every message's DLQ

		// Offset resets, pauses and connector restarts. Planning reads offsets only, but it is
		// the first step of a change and names the group's members, so it
		// needs an operator like apply; the log is for everyone.
		{"POST", "/api/v1/groups/:cluster/:group/offsets/plan", s.api.OffsetsPlan, operator.on(reader(&view.Groups))},
		{"POST", "/api/v1/groups/:cluster/:group/offsets/apply", s.api.OffsetsApply, operator.on(reader(&view.Groups))},
		{"GET", "/api/v1/groups/:cluster/:group/offsets/resets", s.api.OffsetResets, viewer.on(reader(&view.Groups))},
		{"POST", "/api/v1/kafka/share-groups/:cluster/:group/offsets/plan", func(c echo.Context) error { return s.api.PlanOf(c, offsets.KindShare) }, operator.on(reader(&view.ShareGroups))},
		{"POST", "/api/v1/kafka/share-groups/:cluster/:group/offsets/apply", func(c echo.Context) error { return s.api.ApplyOf(c, offsets.KindShare) }, operator.on(reader(&view.ShareGroups))},
		{"GET", "/api/v1/kafka/share-groups/:cluster/:group/offsets/resets", s.api.OffsetResets, viewer.on(reader(&view.ShareGroups))},
		{"POST", consumerBase + "/offsets/plan", s.api.ConsumerPlan, operator.on(reader(&view.Consumers))},
		{"POST", consumerBase + "/offsets/apply", s.api.ConsumerApply, operator.on(reader(&view.Consumers))},
		{"GET", consumerBase + "/offsets/resets", s.api.ConsumerResets, viewer.on(reader(&view.Consumers))},
		{"POST", consumerBase + "/pause", s.api.ConsumerPause, operator.on(reader(&view.Consumers))},
		{"POST", consumerBase + "/resume", s.api.ConsumerResume, operator.on(reader(&view.Consumers))},
		{"POST", "/api/v1/kafka/connectors/:cluster/:connect/:connector/restart", s.api.ConnectorRestart, operator.on(reader(&view.Connectors))},
	}
	for _, k := range s.readerRoutes() {
		on := viewer.on(reader(k.kind))
		rs = append(rs, route{"GET", k.page, k.pageH, on}, route{"GET", k.list, k.listH, viewer}, route{"GET", k.history, k.historyH, on})
	}
	if o := s.auth.Oidc; o != nil {
		// Signing in is how one gets credentials.
		rs = append(rs,
			route{"GET", "/auth/login", func(c echo.Context) error { return o.LoginPage(c, s.view.AssetVersion, http.StatusOK, "") }, public},
			route{"GET", "/auth/start", o.Start, public},
			route{"GET", "/auth/callback", func(c echo.Context) error { return o.Callback(c, s.view.AssetVersion) }, public},
			route{"POST", "/auth/logout", o.Logout, public},
		)
	}
	return rs
}

// readerRoute is a reader kind's page, its list in the API and one
// reader's history there. The page and the history need a viewer of the
// reader the path names, the list a viewer (the view filters it).
type readerRoute struct {
	kind     view.Lister
	page     string
	pageH    echo.HandlerFunc
	list     string
	listH    echo.HandlerFunc
	history  string
	historyH echo.HandlerFunc
}

// readerRoutes are the reader kinds' routes, one line per kind.
func (s *Server) readerRoutes() []readerRoute {
	return []readerRoute{
		{&view.Groups, "/kafka/:cluster/groups/:group", s.ui.GroupPage, "/api/v1/groups", s.api.Groups, "/api/v1/groups/:cluster/:group/history", s.api.GroupHistory},
		{&view.ShareGroups, "/kafka/:cluster/share-groups/:group", s.ui.ShareGroupPage, "/api/v1/kafka/share-groups", s.api.ShareGroups, "/api/v1/kafka/share-groups/:cluster/:group/history", s.api.ShareGroupHistory},
		{&view.StreamsGroups, "/kafka/:cluster/streams-groups/:group", s.ui.StreamsGroupPage, "/api/v1/kafka/streams-groups", s.api.StreamsGroups, "/api/v1/kafka/streams-groups/:cluster/:group/history", s.api.StreamsGroupHistory},
		{&view.Connectors, "/kafka/:cluster/connect/:connect/connectors/:connector", s.ui.ConnectorPage, "/api/v1/kafka/connectors", s.api.Connectors, "/api/v1/kafka/connectors/:cluster/:connect/:connector/history", s.api.ConnectorHistory},
		{&view.Consumers, "/nats/:cluster/streams/:stream/consumers/:consumer", s.ui.NATSConsumerPage, "/api/v1/nats/consumers", s.api.NATSConsumers, consumerBase + "/history", s.api.NATSConsumerHistory},
		{&view.SQSQueues, "/sqs/:cluster/queues/:queue", s.ui.SQSQueuePage, "/api/v1/sqs/queues", s.api.SQSQueues, "/api/v1/sqs/queues/:cluster/:queue/history", s.api.SQSQueueHistory},
		{&view.KinesisApps, "/kinesis/:cluster/applications/:application", s.ui.KinesisAppPage, "/api/v1/kinesis/applications", s.api.KinesisApps, "/api/v1/kinesis/applications/:cluster/:application/history", s.api.KinesisAppHistory},
		{&view.PubSubSubscriptions, "/pubsub/:cluster/subscriptions/:subscription", s.ui.PubSubSubscriptionPage, "/api/v1/pubsub/subscriptions", s.api.PubSubSubscriptions, "/api/v1/pubsub/subscriptions/:cluster/:subscription/history", s.api.PubSubSubscriptionHistory},
		{&view.Queues, "/rabbitmq/:cluster/queues/:vhost/:queue", s.ui.RabbitQueuePage, "/api/v1/rabbitmq/queues", s.api.RabbitQueues, "/api/v1/rabbitmq/queues/:cluster/:vhost/:queue/history", s.api.RabbitQueueHistory},
	}
}

// consumerBase is a JetStream consumer's URL space in the API.
const consumerBase = "/api/v1/nats/consumers/:cluster/:stream/:consumer"

// addRoutes registers the route table, each route behind the check of its
// need, and keeps the needs for the authenticator (which lets public
// routes through without credentials).
func (s *Server) addRoutes() {
	s.needs = map[string]need{}
	for _, r := range s.routes() {
		mustNeed(r)
		s.needs[r.method+" "+r.path] = r.need
		s.e.Add(r.method, r.path, r.handler, s.authorize(r.need))
	}
}

// mustNeed stops the server from starting with a route that declares no
// authorization: neither public nor a role.
func mustNeed(r route) {
	if !r.need.public && auth.RoleRank(r.need.role) == 0 {
		panic(fmt.Sprintf("web: route %s %s declares no authorization need", r.method, r.path))
	}
}

// isPublic reports whether the request's route is declared public. An
// unknown path is not: it answers 401 before 404, so that the server
// tells no one without credentials which paths exist.
func (s *Server) isPublic(c echo.Context) bool {
	return s.needs[c.Request().Method+" "+c.Path()].public
}

// authorize checks a route's need before its handler runs: the role
// anywhere (a principal whose grants reach no higher gets 403), then on
// the path's object (404 when the principal may not see it, 403 when it
// sees it but holds too low a role there).
func (s *Server) authorize(n need) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if n.public {
			return next
		}
		return func(c echo.Context) error {
			p, ok := auth.PrincipalFrom(c.Request().Context())
			if !ok {
				return auth.ErrUnauthenticated
			}
			if auth.RoleRank(p.Role) < auth.RoleRank(n.role) {
				return echo.NewHTTPError(http.StatusForbidden, fmt.Sprintf("forbidden: needs role %s, %s is %s", n.role, p.Name, p.Role))
			}
			if err := s.checkObject(c, n); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// checkObject checks n's role on the object the path names.
func (s *Server) checkObject(c echo.Context, n need) error {
	switch n.object.kind {
	case dlqObject:
		id, err := view.PathParam(c, "id")
		if err != nil {
			return err
		}
		return auth.CheckDLQ(c, n.role, id)
	case jobObject:
		return s.checkJobParam(c, n.role)
	case readerObject:
		r, err := pathReader(c, n.object.reader)
		if err != nil {
			return err
		}
		return auth.CheckReader(c, n.role, r)
	}
	return nil
}

// pathReader is the reader the path names, as its kind's Path reads it.
func pathReader(c echo.Context, p view.Path) (queue.Reader, error) {
	v, err := view.PathValues(c, p.Params)
	if err != nil {
		return queue.Reader{}, err
	}
	return p.Reader(v), nil
}

// checkJobParam checks role on the :job's DLQ. A job the store does not
// know is left to the handler, which answers it (a 404, or a cancel of a
// job still starting here).
func (s *Server) checkJobParam(c echo.Context, role config.Role) error {
	id, err := view.PathParam(c, "job")
	if err != nil || s.opts.DLQs == nil {
		return err
	}
	j, err := s.opts.DLQs.Job(c.Request().Context(), id)
	if err != nil {
		if !auth.PrincipalOf(c.Request().Context()).Everywhere(role) {
			return s.view.DLQFail(c, err) // not found, or unreadable: nothing to check it against
		}
		return nil
	}
	if err := auth.CheckJob(c, role, j); err != nil {
		return err
	}
	c.Set(view.JobKey, j)
	return nil
}
