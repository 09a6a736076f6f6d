// Package outbox is the one way queuewatch reaches an outbox database: the
// PostgreSQL or MySQL/MariaDB database whose outbox tables and replication
// slots collectors/outbox polls (and, for the demo, an SQLite file).
//
// app builds one DB per configured outbox source from its config.Outbox
// section; the collector and check's index advice both read through it.
// Decided here, once:
//
//   - how to connect: the DSN parsed by the driver's own parser (pgx,
//     go-sql-driver; config validation runs the same parsers first, so a
//     malformed DSN is a config error), a connect timeout, queuewatch named
//     to the server, zone-less timestamps read as UTC unless the DSN sets a
//     zone, and a pool of at most two connections;
//   - how to read safely: every query runs in a read-only transaction with
//     a statement timeout the server enforces (PostgreSQL SET LOCAL
//     statement_timeout; MariaDB and MySQL get theirs in the query, see
//     MariaDB), and on PostgreSQL every session is read-only by default as
//     a second guard. ReadOnly marks a query the server cancelled with
//     ErrStatementTimeout.
//
// An outbox database is not a message broker, but it is reached the way
// brokers are: through one access value built from config and shared by
// every reader of it, so it lives beside them. Building a DB does no I/O;
// an unreachable server or a wrong password shows on the first Connect.
package outbox
