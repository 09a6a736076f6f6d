package web

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/dlqreplay"
	"github.com/queuewatch/queuewatch/offsets"
	"github.com/queuewatch/queuewatch/queue"
)

// A need is what a route asks of the request's principal, declared once
// in the route table (as Grafana declares each route's permission): public
// (no credentials), or a role — anywhere, for a list or a form whose
// objects the view filters and access.go checks, or on the object that the
// path names. A route without a need does not start (mustNeed).
type need struct {
	public bool
	role   config.Role
	object object
}

// object is the kind of thing a route's path names, read from its
// parameters by pathObject.
type object int

const (
	anyObject    object = iota // a list, a form or a page of many: the view filters them
	dlqObject                  // :id, a DLQ ID
	jobObject                  // :job, a job, by its DLQ
	kafkaGroup                 // :cluster/:group, a consumer or share group
	natsConsumer               // :cluster/:stream/:consumer
	sqsQueue                   // :cluster/:queue
	rabbitQueue                // :cluster/:vhost/:queue
)

var (
	public   = need{public: true}
	viewer   = need{role: config.RoleViewer}
	operator = need{role: config.RoleOperator}
	admin    = need{role: config.RoleAdmin}
)

// on is n on the object the path names.
func (n need) on(o object) need { n.object = o; return n }

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
		{"GET", "/", s.overview, viewer},
		{"GET", "/kafka/:cluster/groups/:group", s.groupPage, viewer.on(kafkaGroup)},
		{"GET", "/kafka/:cluster/share-groups/:group", s.shareGroupPage, viewer.on(kafkaGroup)},
		{"GET", "/nats/:cluster/streams/:stream/consumers/:consumer", s.natsConsumerPage, viewer.on(natsConsumer)},
		{"GET", "/sqs/:cluster/queues/:queue", s.sqsQueuePage, viewer.on(sqsQueue)},
		{"GET", "/rabbitmq/:cluster/queues/:vhost/:queue", s.rabbitQueuePage, viewer.on(rabbitQueue)},
		{"GET", "/outbox/:source", s.outboxPage, viewer},
		{"GET", "/dlq/:id", s.dlqPage, viewer.on(dlqObject)},
		{"GET", "/replays", s.replaysPage, viewer},

		// Readers.
		{"GET", "/api/v1/groups", s.apiGroups, viewer},
		{"GET", "/api/v1/groups/:cluster/:group", s.apiGroup, viewer.on(kafkaGroup)},
		{"GET", "/api/v1/groups/:cluster/:group/history", s.apiGroupHistory, viewer.on(kafkaGroup)},
		{"GET", "/api/v1/kafka/share-groups", s.apiShareGroups, viewer},
		{"GET", "/api/v1/kafka/share-groups/:cluster/:group/history", s.apiShareGroupHistory, viewer.on(kafkaGroup)},
		{"GET", "/api/v1/nats/consumers", s.apiNATSConsumers, viewer},
		{"GET", "/api/v1/nats/consumers/:cluster/:stream/:consumer/history", s.apiNATSConsumerHistory, viewer.on(natsConsumer)},
		{"GET", "/api/v1/sqs/queues", s.apiSQSQueues, viewer},
		{"GET", "/api/v1/sqs/queues/:cluster/:queue/history", s.apiSQSQueueHistory, viewer.on(sqsQueue)},
		{"GET", "/api/v1/rabbitmq/queues", s.apiRabbitQueues, viewer},
		{"GET", "/api/v1/rabbitmq/queues/:cluster/:vhost/:queue", s.apiRabbitQueue, viewer.on(rabbitQueue)},
		{"GET", "/api/v1/rabbitmq/queues/:cluster/:vhost/:queue/history", s.apiRabbitQueueHistory, viewer.on(rabbitQueue)},
		{"GET", "/api/v1/outbox", s.apiOutbox, viewer},
		{"GET", "/api/v1/outbox/:source/history", s.apiOutboxHistory, viewer},
		{"GET", "/api/v1/sources", s.apiSources, viewer},
		{"GET", "/api/v1/openapi.json", s.apiOpenAPI, viewer},

		// Dead letters. Replay and move need an operator, delete an admin:
		// checkReplay reads the action from the body.
		{"GET", "/api/v1/dlqs", s.apiDLQs, viewer},
		{"GET", "/api/v1/dlqs/:id/messages", s.apiDLQMessages, viewer.on(dlqObject)},
		{"GET", "/api/v1/dlqs/:id/messages/:msg", s.apiDLQMessage, viewer.on(dlqObject)},
		{"GET", "/api/v1/dlqs/:id/messages/:msg/body", s.apiDLQBody, viewer.on(dlqObject)},
		{"POST", "/api/v1/dlqs/:id/replay", s.apiDLQReplay, operator.on(dlqObject)},
		{"POST", "/api/v1/dlqs/:id/preview", s.apiDLQPreview, operator.on(dlqObject)},
		{"GET", "/api/v1/replays/:job", s.apiReplay, viewer.on(jobObject)},
		{"DELETE", "/api/v1/replays/:job", s.apiCancelReplay, operator.on(jobObject)},
		{"GET", "/api/v1/audit", s.apiAudit, viewer},
		{"GET", "/api/v1/archive", s.apiArchive, viewer},
		{"POST", "/api/v1/archive/restore", s.apiRestore, admin}, // checkRestore: the target and every message's DLQ

		// Offset resets and pauses. Planning reads offsets only, but it is
		// the first step of a change and names the group's members, so it
		// needs an operator like apply; the log is for everyone.
		{"POST", "/api/v1/groups/:cluster/:group/offsets/plan", s.apiOffsetsPlan, operator.on(kafkaGroup)},
		{"POST", "/api/v1/groups/:cluster/:group/offsets/apply", s.apiOffsetsApply, operator.on(kafkaGroup)},
		{"GET", "/api/v1/groups/:cluster/:group/offsets/resets", s.apiOffsetResets, viewer.on(kafkaGroup)},
		{"POST", "/api/v1/kafka/share-groups/:cluster/:group/offsets/plan", func(c echo.Context) error { return s.offsetsPlan(c, offsets.KindShare) }, operator.on(kafkaGroup)},
		{"POST", "/api/v1/kafka/share-groups/:cluster/:group/offsets/apply", func(c echo.Context) error { return s.offsetsApply(c, offsets.KindShare) }, operator.on(kafkaGroup)},
		{"GET", "/api/v1/kafka/share-groups/:cluster/:group/offsets/resets", s.apiOffsetResets, viewer.on(kafkaGroup)},
		{"POST", consumerBase + "/offsets/plan", s.apiConsumerPlan, operator.on(natsConsumer)},
		{"POST", consumerBase + "/offsets/apply", s.apiConsumerApply, operator.on(natsConsumer)},
		{"GET", consumerBase + "/offsets/resets", s.apiConsumerResets, viewer.on(natsConsumer)},
		{"POST", consumerBase + "/pause", s.apiConsumerPause, operator.on(natsConsumer)},
		{"POST", consumerBase + "/resume", s.apiConsumerResume, operator.on(natsConsumer)},
	}
	if o := s.auth.oidc; o != nil {
		// Signing in is how one gets credentials.
		rs = append(rs,
			route{"GET", "/auth/login", func(c echo.Context) error { return o.loginPage(c, s.assetVersion, http.StatusOK, "") }, public},
			route{"GET", "/auth/start", o.start, public},
			route{"GET", "/auth/callback", func(c echo.Context) error { return o.callback(c, s.assetVersion) }, public},
			route{"POST", "/auth/logout", o.logout, public},
		)
	}
	return rs
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
	if !r.need.public && roleRank(r.need.role) == 0 {
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
			p, ok := PrincipalFrom(c.Request().Context())
			if !ok {
				return errUnauthenticated
			}
			if roleRank(p.Role) < roleRank(n.role) {
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
	switch n.object {
	case dlqObject:
		id, err := pathParam(c, "id")
		if err != nil {
			return err
		}
		return checkDLQ(c, n.role, id)
	case jobObject:
		return s.checkJobParam(c, n.role)
	case kafkaGroup, natsConsumer, sqsQueue, rabbitQueue:
		r, err := pathReader(c, n.object)
		if err != nil {
			return err
		}
		return checkReader(c, n.role, r)
	}
	return nil
}

// pathReader is the reader the path names.
func pathReader(c echo.Context, o object) (queue.Reader, error) {
	params := map[object][]string{
		kafkaGroup:   {"cluster", "group"},
		natsConsumer: {"cluster", "stream", "consumer"},
		sqsQueue:     {"cluster", "queue"},
		rabbitQueue:  {"cluster", "vhost", "queue"},
	}[o]
	v := make([]string, len(params))
	for i, name := range params {
		var err error
		if v[i], err = pathParam(c, name); err != nil {
			return queue.Reader{}, err
		}
	}
	switch o {
	case kafkaGroup:
		return queue.Reader{Broker: queue.Kafka, Cluster: v[0], Name: v[1]}, nil
	case natsConsumer:
		return queue.Reader{Broker: queue.NATS, Cluster: v[0], Scope: v[1], Name: v[2]}, nil
	case rabbitQueue:
		return queue.Reader{Broker: queue.RabbitMQ, Cluster: v[0], Scope: v[1], Name: v[2]}, nil
	}
	return queue.Reader{Broker: queue.SQS, Cluster: v[0], Name: v[1]}, nil
}

// checkJobParam checks role on the :job's DLQ. A job the store does not
// know is left to the handler, which answers it (a 404, or a cancel of a
// job still starting here).
func (s *Server) checkJobParam(c echo.Context, role config.Role) error {
	id, err := pathParam(c, "job")
	if err != nil || s.opts.DLQs == nil {
		return err
	}
	j, err := s.opts.DLQs.Job(c.Request().Context(), id)
	if err != nil {
		if !principalOf(c.Request().Context()).everywhere(role) {
			return s.dlqFail(c, err) // not found, or unreadable: nothing to check it against
		}
		return nil
	}
	if err := checkJob(c, role, j); err != nil {
		return err
	}
	c.Set(jobKey, j)
	return nil
}

// jobKey is where checkJobParam leaves the job it read, so that the
// handler does not read it again (pathJob).
const jobKey = "web.job"

// pathJob is the :job id, as the route's authorization read it, or as
// read now when it could not (a job it did not find, left to the handler
// to answer for a principal whose role holds everywhere).
func pathJob(c echo.Context, svc DLQService, id string) (dlqreplay.Job, error) {
	if j, ok := c.Get(jobKey).(dlqreplay.Job); ok && j.ID == id {
		return j, nil
	}
	return svc.Job(c.Request().Context(), id)
}
