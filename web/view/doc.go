// Package view is the data as the request's principal may see it, and
// the one way web/api and web/ui read it: Server (embedded by both
// surfaces' servers) holds the options, Mon is the scoped Monitor
// (auth.Scoped), and the lookups (GroupParam, ConsumerParam, FindDLQ, …)
// find a path's object in it, so an object out of scope is nowhere.
//
// Dead letters reach a surface only through mask.go: Shown and
// ShownArchived decode and mask them (unless a clear view was asked for
// and allowed, ClearRequested) and record the read first; JobView and
// ReceiptView keep a masked header's value out of a selection shown to
// one who may not unmask. DLQTools, Resets and ConsumerActions are the
// services behind the DLQ, offset-reset and pause endpoints, or the 503
// each answers without one.
//
// The tables (tables.go and one file per reader kind) are what a list
// shows of each kind: its rows from a snapshot, its sort keys and name
// order, the filter, and its history URL; the API's lists and the
// overview's tabs sort and filter through the same ones.
package view
