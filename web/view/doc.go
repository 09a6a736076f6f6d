// Package view is the data as the request's principal may see it, and
// the one way web/api and web/ui read it. Server (embedded by both
// surfaces' servers) keeps the options private: a surface reads the
// collectors only through Mon, the Monitor cut to the principal's scope
// (auth.Scoped), and finds a path's object there (a Kind's Find,
// FindDLQ), so an object out of scope is nowhere.
//
// Dead letters, jobs, receipts, the archive and the body-read log are
// reached only through DLQ(c), the DLQ service as the principal may use
// it: lists are cut to the principal's scope in the query, before their
// limit; every message, job, receipt and archived row comes back masked
// (mask.go: masking is applied here once, for every surface), a clear
// view only where it was asked for and allowed, and each read recorded
// before it is shown; and an action is checked before it runs (a
// selection by a masked value, delete's admin, auth.CheckReplay's
// destinations, auth.CheckRestore). Plan likewise checks what a reset
// plan names (auth.CheckPlanNames) before it plans. A CEL selection or
// filter (selexpr) that reads a masked value is refused the same way
// (CheckMaskedWhere); a search across DLQs (search.go) reads only the
// DLQs of the principal's view and matches messages as shown, masked.
//
// The reader-kind table (kinds.go; each Kind declared in tables.go or its
// broker's file) is what the overview, the API's lists and the route
// table know of each kind of reader: its tab, rows, sort keys, filter,
// name order, spark, and the path that names one reader.
package view
