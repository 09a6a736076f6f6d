// Package auth is who is asking and what they may see and do: the
// authentication modes, sessions and OIDC sign-in, principals and their
// grants, the checks of every object a request names, and the Monitor cut
// to a principal's scope.
//
// Modes (config.Auth): none lets everyone in as admin (CheckListenAuth
// allows that only on loopback); basic checks bcrypt hashes (successful
// checks are cached, as bcrypt is slow by design); tokens compares the
// SHA-256 of a bearer token with every configured hash in constant time;
// proxy trusts the user and groups headers only when the TCP peer is in
// trusted_cidrs; oidc signs people in at a provider (authorization code
// with PKCE) and keeps a sealed session cookie. Bearer tokens are accepted
// in every mode that has them, for API clients. The Principal (name,
// grants) is in the request context.
//
// Object checks: CheckDLQ, CheckJob and CheckReader are what the route
// table's needs call for the object a path names; CheckReplay,
// CheckRestore and CheckPlanNames check what a request names in its body
// (a replay's target, a restore's archive IDs and target, a plan's
// group: and topics). A name the principal may not see answers as a name
// that does not exist, so no answer is an oracle of another team's
// objects.
//
// Scoped is the Monitor as a principal sees it: lists, pages, histories,
// sources and partial errors hold what its grants cover, filtered in the
// read (never copied field by field); SeenDLQs and SeenResets are the
// filters the store's list queries take before their limit.
package auth
