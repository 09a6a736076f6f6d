// Package web serves queuewatch's HTTP interface: the UI pages (templ
// components), the JSON API, /metrics and the health endpoints.
//
// Handlers are thin: they read from the Monitor interface declared here (the
// collectors satisfy it) and render a component or JSON. The overview and the
// group, consumer and outbox pages read only the last poll, so a slow broker
// never slows them; only the DLQ pages reach a broker, through the DLQ
// service (see below). What the overview says about readers (queue.Reader:
// groups, JetStream consumers, outbox tables, slots) is written once in
// readers.go; a broker's file holds only its own page's sections.
//
// Pages are server-rendered and keep their list state (tab, sort, dir, q,
// page) in the URL. app.js refreshes the live parts every 5 s through htmx:
// it asks for the current URL with partial=1 and the server answers only the
// live blocks, each swapped out of band, so the filter box keeps its focus
// and the layout does not jump. Only one page of 200 rows is rendered, so a
// page costs the same with 200 or 20,000 groups.
//
// Access control (Options.Auth, config.Auth): mode none lets everyone in as
// admin (CheckListenAuth allows that only on loopback); basic checks bcrypt
// hashes (successful checks are cached, as bcrypt is slow by design); tokens
// compares the SHA-256 of a bearer token with every configured hash in
// constant time; proxy trusts the user and groups headers only when the TCP
// peer is in trusted_cidrs. Bearer tokens are accepted in every mode that
// has them, for API clients. The Principal (name, grants) is in the request
// context.
//
// Authorization is declared at the route: routes.go is the one route
// table, and each line names its need — public (/healthz, /readyz,
// /metrics, /static/ and the sign-in endpoints: probes and Prometheus
// scrape without credentials, assets are public code, signing in is how
// one gets credentials), or a role anywhere (a list or a form) or on the
// DLQ, job or reader its path names. One middleware checks it before the
// handler: an object the principal may not see answers 404 naming nothing,
// one it sees with too low a role 403 with the reason. A route without a
// need does not start. What a request names in its body (a replay's
// target, a restore's archive IDs, a plan's group: and topics) is checked
// in access.go, and handlers read data only through the principal's view
// (s.mon, scope.go): lists, pages and histories hold what its grants
// cover, filtered in the read (the store's list queries take the DLQ
// filter before their limit).
//
// DLQ tools (Options.DLQs, the DLQService declared here; nil answers 503)
// back /dlq/{id}, /replays and the DLQ API. A DLQ ID is one path segment,
// escaped. The DLQ page reads one page of messages per load and renders
// every byte through templ's escaping (bodies cut at 16 KiB, the full body
// is a download served as an octet-stream attachment); its 5 s refresh
// re-reads only the header from the Monitor, never the broker. Every action
// runs a dry run first and is confirmed from its receipt; replay and move
// need an operator, delete and restore an admin, checked again by the API.
//
// Offset resets (Options.Offsets, the OffsetResets declared here; nil
// answers 503 and hides the group page's button) plan and apply through
// package offsets' broker-neutral types; app passes the Kafka access in.
// Apply takes only a plan_id, so what is committed is what the operator
// reviewed: the reset service keeps each plan the API issued (15 minutes,
// 256 at most) in the store every replica shares, so a plan made through
// one replica applies through any other; the server keeps none itself.
// Likewise a JetStream consumer's pause or resume is kept by the service
// and every replica's consumer page shows it until a poll does. Planning,
// applying and pausing need an operator.
//
// Cross-site request forgery: net/http.CrossOriginProtection refuses every
// POST, PUT, PATCH and DELETE that a browser marks as coming from another
// origin (Sec-Fetch-Site, or an Origin that does not match the Host in older
// browsers), in every auth mode and before authentication. Requests without
// those headers (curl, scripts, the CLI) carry no ambient credentials and
// are let through to authentication, so the API needs no token dance.
package web
