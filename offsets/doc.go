// Package offsets plans and applies consumer-group offset resets, the way a
// careful operator would: plan → review → apply.
//
// A Plan is read-only: it reads the group's state and members, its committed
// offsets and the partitions' log start and end, and says per partition
// where the group stands, where it would stand after the reset and what
// that means (records re-processed or skipped). It never changes anything.
// Its ID (PlanID) is a hash of the cluster, the group, the current offsets
// and the targets, so two plans that would commit the same offsets over the
// same starting point have the same ID, and a plan file edited by hand no
// longer matches its ID.
//
// Apply commits a plan, and only a fresh, matching one: just before
// committing it describes the group again and refuses unless the group is
// Empty or Dead (ErrGroupActive: a live member would overwrite the reset
// with its next commit), and refuses as stale when any committed offset
// differs from the plan's (ErrStale: someone consumed or committed since;
// re-plan). It commits exactly the planned offsets, reads them back and
// reports per partition whether each was committed.
//
// The package is broker-neutral: what to compute is decided here (Resolve,
// Seal, Apply), a broker only reads and commits through the Broker
// interface (offsets/kafka for Kafka consumer groups).
//
// A Broker may reset another kind of group than a consumer group
// (Kinded): offsets/kafka's ShareResets moves a Kafka share group's
// start offsets. Its plans say their Kind, are hashed under a header that
// names it, and apply only through a Broker of the same kind.
//
// Service is what a process offers on top (serve's API and UI, the CLI):
// it picks the Broker of a request's cluster, applies under a lease and
// with a record in the Store every replica shares, keeps the plans the API
// issued so any replica can apply them, and pauses and resumes readers of
// brokers that can (Pauser). Its state is the Store's, never its own; app
// only builds it (the process's store implements Store as store.ResetStore).
package offsets
