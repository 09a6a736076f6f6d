// Package web serves queuewatch's HTTP interface: the middleware chain,
// the one route table (routes.go), static assets, the shard redirect and
// the errors' one shape, over two surfaces split as Prometheus splits its
// web/api/v1 from its UI:
//
//   - web/api, the JSON API under /api/v1 (its OpenAPI document is
//     web/api/openapi.json);
//   - web/ui, the server-rendered pages (templ components in
//     web/components, assets in web/static).
//
// Both read through web/view, the data as the request's principal may
// see it, which web/auth builds: who is asking (authentication modes,
// sessions, OIDC), what their grants cover, and the checks of every
// object a request names. Neither surface reads the collectors' Monitor
// or the DLQ service any other way, and neither imports the other
// (.golangci.yml's depguard rules hold that layering).
//
// Authorization is declared at the route, as Grafana declares each
// route's permission: every line of the route table names its need —
// public (/healthz, /readyz, /metrics, /static/ and the sign-in
// endpoints: probes and Prometheus scrape without credentials, assets
// are public code, signing in is how one gets credentials), or a role
// anywhere (a list or a form) or on the DLQ, job or reader its path
// names. One middleware checks it before the handler: an object the
// principal may not see answers 404 naming nothing, one it sees with too
// low a role 403 with the reason. A route without a need does not start
// (mustNeed, and a test that walks the table).
//
// Cross-site request forgery: net/http.CrossOriginProtection refuses every
// POST, PUT, PATCH and DELETE that a browser marks as coming from another
// origin (Sec-Fetch-Site, or an Origin that does not match the Host in older
// browsers), in every auth mode and before authentication. Requests without
// those headers (curl, scripts, the CLI) carry no ambient credentials and
// are let through to authentication, so the API needs no token dance.
package web
