// Package audit is the durable record of every DLQ job and every archived
// message: dlqreplay.Store kept in an embedded SQLite database
// (modernc.org/sqlite, pure Go) in the data directory. It speaks
// dlqreplay's types; nothing outside this package sees a row.
//
// The store is written before the broker is told anything irreversible: a
// job row exists before its first message moves, per-message outcomes are
// flushed in batches while it runs, and a deleted message is archived (and
// fsynced, synchronous=FULL) before its DLQ copy is acknowledged. A job that
// was still running when the process died is marked interrupted the next
// time the store is opened; its counts and outcomes are what was flushed.
package audit
