package queue

import (
	"net/url"
	"time"
)

// A Reader is anything that reads from a queue, in the one shape every
// broker shares: a Kafka consumer group, a JetStream consumer, a RabbitMQ
// queue's consumers, an SQS queue's, a Kafka share group, an outbox table
// (read by its polling publisher), a replication slot (read by a CDC
// client). What is said of readers of every broker — the overview's
// counts and "Needs attention", the worst lag and its trend, the alert
// rules' reader shapes, the scope a grant covers — is written once over
// Readers; each broker's type builds its Reader with a Reader method
// (web/view's Kinds say which of a kind's rows are readers), so shared
// code never asks which broker a reader belongs to.
type Reader struct {
	Broker  Broker
	Cluster string // the cluster, or the outbox source
	// Scope is what Name is unique within besides the cluster: a JetStream
	// stream, a RabbitMQ vhost; empty where the cluster alone is enough.
	Scope string
	Name  string
	// Title is how a list names the reader: Name, or Name with its kind
	// where the name alone would read as something else ("slot debezium").
	Title string

	// Status is the effective status (EffectiveStatus) and Reason its
	// sentence: never empty for a reader that is not ok.
	Status Status
	Reason string
	// StatusSince is when the reader's current non-ok condition began, as
	// the status evaluation tracks it across polls, restarts and replicas
	// (see Onset); zero when ok or unknown.
	StatusSince time.Time

	// Backlog is what waits to be read, in BacklogUnit; BacklogKnown is
	// false when the broker cannot tell (a slot no client has used) or the
	// reader could not be read.
	Backlog      int64
	BacklogUnit  Unit
	BacklogKnown bool

	// LagSeconds is the age of the oldest item not yet read, found as
	// LagBasis says; it means nothing when the basis is LagUnknown.
	LagSeconds float64
	LagBasis   LagBasis
	// LagNote says how an estimated lag age was made, for people ("seen
	// while browsing"): such an estimate is a sighting kept across polls.
	// An estimate without a note is a poll still reading (a Kafka
	// partition's lag seconds), which the next poll completes.
	LagNote string

	// Headroom is how long until the broker deletes the oldest item not
	// yet read (see Headroom); unknown where retention is infinite or
	// nothing is pending.
	Headroom Headroom

	// Members is how many clients read, -1 where the broker does not say.
	Members int
	// Err is why the reader could not be read; its status is then error.
	Err string
	// Page is the path of the reader's page in the UI; "" when it has none.
	Page string
}

// ID is the reader's ID in scopes and the audit log, in the format of a
// DLQ's ID: "broker:cluster:scope:name" with the scope escaped
// ("rabbitmq:main:a%3Ab:orders", "nats:main:ORDERS:shipper",
// "kafka:prod::billing").
func (r Reader) ID() string { return objectID(r.Broker, r.Cluster, r.Scope, r.Name) }

// Unit is what a reader's backlog counts.
type Unit string

// Units of a backlog. A row of an outbox table is one message to publish;
// a replication slot's backlog is the WAL it holds back, in bytes.
const (
	UnitMessages Unit = "messages"
	UnitRows     Unit = "rows"
	UnitBytes    Unit = "bytes"
	// UnitShards counts a Kinesis application's shards whose checkpoint
	// is behind the newest record: its records behind are not countable.
	UnitShards Unit = "shards"
)

// LagBasis says how a reader's lag age was found.
type LagBasis string

// Lag bases. An estimate is a lower bound: the broker has not yet answered
// for every part of the reader (a Kafka partition whose next record is
// still being read), so the true age is at least that.
const (
	LagExact    LagBasis = "exact"
	LagEstimate LagBasis = "estimate"
	LagUnknown  LagBasis = "unknown"
)

// EffectiveStatus is the one rule for the status a reader shows everywhere:
// the UI, the JSON API, the status metric, sorts and "needs attention". A
// reader that could not be read (err set) is StatusError, whatever an
// earlier evaluation left; one nobody evaluated is StatusOK; otherwise it
// is the evaluated status.
//
// A reader whose source is down keeps the status of the source's last good
// poll: the source itself is shown as down (queuewatch_collector_up, the
// source badges), and flipping every reader to error would resolve firing
// stop and stall alerts exactly when nobody can see the broker.
func EffectiveStatus(err string, evaluated Status) Status {
	switch {
	case err != "":
		return StatusError
	case evaluated == "":
		return StatusOK
	}
	return evaluated
}

// EffectiveReason is the sentence that goes with EffectiveStatus: the read
// error of a reader that could not be read, else the evaluated reason (""
// when the evaluation gave none).
func EffectiveReason(err, reason string) string {
	if err != "" {
		return err
	}
	return reason
}

// BacklogText is the backlog short enough for a table cell: "12.4k
// pending", "3 MiB" for bytes, "—" when unknown.
func (r *Reader) BacklogText() string {
	switch {
	case !r.BacklogKnown:
		return "—"
	case r.BacklogUnit == UnitBytes:
		return HumanBytes(r.Backlog)
	case r.BacklogUnit == UnitShards:
		return ExactCount(r.Backlog) + " " + Plural(r.Backlog, "shard", "shards") + " behind"
	}
	return HumanCount(r.Backlog) + " pending"
}

// BacklogTitle is the exact backlog, for a hover title: "12,400 messages".
func (r *Reader) BacklogTitle() string {
	if !r.BacklogKnown {
		return "unknown"
	}
	return ExactCount(r.Backlog) + " " + string(r.BacklogUnit)
}

// known leaves out the backlog and lag age of a reader that could not be
// read: they are what a failed read left (often zero), not what waits.
func (r Reader) known() Reader {
	if r.Err != "" {
		r.Backlog, r.BacklogKnown, r.LagSeconds, r.LagBasis, r.LagNote = 0, false, 0, LagUnknown, ""
		r.Headroom = Headroom{}
	}
	return r
}

// Lagging reports whether r is behind and not catching up (see
// Status.Lagging): what the overview's lag card counts.
func (r *Reader) Lagging() bool { return r.Status.Lagging() }

// Stopped reports whether nothing moves for r (see Status.Stopped).
func (r *Reader) Stopped() bool { return r.Status.Stopped() }

// Reader is g in the shape every reader shares. Its lag age is an estimate
// while some partition's lag seconds are still being read.
func (g *ConsumerGroup) Reader() Reader {
	r := Reader{
		Broker: Kafka, Cluster: g.Cluster, Name: g.Name, Title: g.Name,
		Status: g.EffectiveStatus(), Reason: g.EffectiveReason(), StatusSince: g.StatusSince,
		Backlog: g.TotalLag(), BacklogUnit: UnitMessages, BacklogKnown: true,
		LagSeconds: g.MaxLagSeconds(), LagBasis: LagExact, Headroom: g.Headroom,
		Members: g.Members, Err: g.Err,
		Page: GroupPage(g.Cluster, g.Name),
	}
	if g.LagSecondsPending() {
		r.LagBasis = LagEstimate
	}
	return r.known()
}

// Reader is c in the shape every reader shares. JetStream does not count a
// consumer's clients, so Members is unknown.
func (c *StreamConsumer) Reader() Reader {
	r := Reader{
		Broker: NATS, Cluster: c.Cluster, Scope: c.Stream, Name: c.Name, Title: c.Name,
		Status: c.EffectiveStatus(), Reason: c.EffectiveReason(), StatusSince: c.StatusSince,
		Backlog: int64(min(c.Pending, 1<<63-1)), BacklogUnit: UnitMessages, BacklogKnown: true,
		LagBasis: LagUnknown, Headroom: c.Headroom, Members: -1, Err: c.Err,
		Page: ConsumerPage(c.Cluster, c.Stream, c.Name),
	}
	if c.HasLagSeconds {
		r.LagSeconds, r.LagBasis = c.LagSeconds, LagExact
	}
	return r.known()
}

// Reader is the consumers of q in the shape every reader shares: their
// backlog is q's ready messages (unacknowledged ones are already
// delivered) and their lag age the head message's age, when the broker
// knows it.
func (q *Queue) Reader() Reader {
	r := Reader{
		Broker: RabbitMQ, Cluster: q.Cluster, Scope: q.VHost, Name: q.Name, Title: q.Name,
		Status: q.EffectiveStatus(), Reason: q.StatusReason, StatusSince: q.StatusSince,
		Backlog: q.Ready, BacklogUnit: UnitMessages, BacklogKnown: true,
		LagBasis: LagUnknown, Headroom: q.RetentionHeadroom(), Members: q.Consumers,
		Page: RabbitMQQueuePage(q.Cluster, q.VHost, q.Name),
	}
	if q.HasHeadAge {
		r.LagSeconds, r.LagBasis = q.HeadMessageAge.Seconds(), LagExact
	}
	return r
}

// Reader is t in the shape every reader shares: its backlog is its unsent
// rows and its lag age the age of the oldest one. Without an evaluated
// reason the sentence says what the backlog is.
func (t *OutboxTable) Reader() Reader {
	r := Reader{
		Broker: Outbox, Cluster: t.Source, Name: t.Table, Title: t.Table,
		Status: t.EffectiveStatus(), Reason: t.EffectiveReason(), StatusSince: t.StatusSince,
		Backlog: t.Pending, BacklogUnit: UnitRows, BacklogKnown: true,
		LagSeconds: t.OldestPendingAge.Seconds(), LagBasis: LagExact,
		Members: -1, Err: t.Err, Page: OutboxPage(t.Source),
	}
	switch {
	case r.Reason != "":
	case t.Pending == 0:
		r.Reason = "no pending rows"
	default:
		r.Reason = "the oldest pending row is " + HumanDuration(t.OldestPendingAge) + " old"
	}
	return r.known()
}

// Reader is s in the shape every reader shares: its backlog is the WAL it
// holds back, in bytes, and it has no lag age.
func (s *ReplicationSlot) Reader() Reader {
	r := Reader{
		Broker: Outbox, Cluster: s.Source, Name: s.Slot, Title: "slot " + s.Slot,
		Status: s.EffectiveStatus(), Reason: s.EffectiveReason(), StatusSince: s.StatusSince,
		Backlog: s.LagBytes, BacklogUnit: UnitBytes, BacklogKnown: s.LagUnknown == "",
		LagBasis: LagUnknown, Err: s.Err, Page: OutboxPage(s.Source),
	}
	// A slot serves one client at a time.
	if s.Active {
		r.Members = 1
	}
	switch {
	case r.Reason != "":
	case !s.Active:
		r.Reason = "no consumer is connected to the slot"
	default:
		r.Reason = "a consumer is connected"
	}
	return r.known()
}

// The pages of readers. Every segment is escaped, so any name makes a
// working, harmless link; web routes these paths and links with them.

// GroupPage is the path of a Kafka consumer group's page.
func GroupPage(cluster, group string) string {
	return "/kafka/" + url.PathEscape(cluster) + "/groups/" + url.PathEscape(group)
}

// ConsumerPage is the path of a JetStream consumer's page.
func ConsumerPage(cluster, stream, consumer string) string {
	return "/nats/" + url.PathEscape(cluster) + "/streams/" + url.PathEscape(stream) + "/consumers/" + url.PathEscape(consumer)
}

// RabbitMQQueuePage is the path of a RabbitMQ queue's page. The vhost is
// one escaped segment, so the default vhost "/" is "%2F".
func RabbitMQQueuePage(cluster, vhost, name string) string {
	return "/rabbitmq/" + url.PathEscape(cluster) + "/queues/" + url.PathEscape(vhost) + "/" + url.PathEscape(name)
}

// OutboxPage is the path of an outbox source's page, which shows its
// tables and slots together.
func OutboxPage(source string) string { return "/outbox/" + url.PathEscape(source) }

// EffectiveStatus is the status t shows everywhere (see EffectiveStatus).
func (t *OutboxTable) EffectiveStatus() Status { return EffectiveStatus(t.Err, t.Status) }

// EffectiveReason is the sentence that goes with t's EffectiveStatus.
func (t *OutboxTable) EffectiveReason() string { return EffectiveReason(t.Err, t.StatusReason) }

// EffectiveStatus is the status s shows everywhere (see EffectiveStatus).
func (s *ReplicationSlot) EffectiveStatus() Status { return EffectiveStatus(s.Err, s.Status) }

// EffectiveReason is the sentence that goes with s's EffectiveStatus.
func (s *ReplicationSlot) EffectiveReason() string { return EffectiveReason(s.Err, s.StatusReason) }

// ReaderKey is a reader's identity, comparable so it can key a map: what
// its history is kept and looked up by. Unit is part of it because an
// outbox source's table and replication slot may share a name; they count
// different things (rows, bytes), and nothing else of one broker does.
type ReaderKey struct {
	Broker  Broker
	Cluster string
	Scope   string
	Name    string
	Unit    Unit
}

// Key is r's identity.
func (r *Reader) Key() ReaderKey {
	return ReaderKey{Broker: r.Broker, Cluster: r.Cluster, Scope: r.Scope, Name: r.Name, Unit: r.BacklogUnit}
}

// ReaderPoint is one poll of a reader, kept for its history and charts:
// its backlog and, when HasLagSeconds, its lag age.
type ReaderPoint struct {
	At            time.Time
	Backlog       int64
	LagSeconds    float64
	HasLagSeconds bool
}

// Point is r at the poll at, and whether the poll is worth keeping: a
// reader whose backlog is unknown (it could not be read) or whose lag age
// is still an estimate (the poll that completes it follows at once) would
// chart as a false drop, so it gets no point. An estimate with a LagNote
// is a sighting no later poll completes: its poll is kept, with the lag
// age but not HasLagSeconds (it is not exact).
func (r *Reader) Point(at time.Time) (ReaderPoint, bool) {
	if !r.BacklogKnown || r.LagBasis == LagEstimate && r.LagNote == "" {
		return ReaderPoint{}, false
	}
	return ReaderPoint{At: at, Backlog: r.Backlog, LagSeconds: r.LagSeconds, HasLagSeconds: r.LagBasis == LagExact}, true
}

// Readers lists every reader of s, one line per kind of reader, so a
// broker that brings a new kind adds one line here and its readers get
// history, charts and the overview's cards with no other change.
func (s *Snapshot) Readers() []Reader {
	out := make([]Reader, 0, s.ReaderCount())
	out = appendReaders(out, s.Groups)
	out = appendReaders(out, s.ShareGroups)
	out = appendReaders(out, s.StreamsGroups)
	out = appendReaders(out, s.Connectors)
	out = appendReaders(out, s.Consumers)
	out = appendReaders(out, s.Queues)
	out = appendReaders(out, s.OutboxTables)
	out = appendReaders(out, s.Slots)
	out = appendReaders(out, s.KinesisApps)
	out = appendReaders(out, s.SQSQueues)
	return appendReaders(out, s.PubSubSubscriptions)
}

// WithReaders is a copy of s's reader lists holding only the readers keep
// accepts (the rest of s is not copied): every reader kind's list, here
// beside Readers, so a kind added to Snapshot is filtered wherever a view
// cuts a snapshot to a principal's scope.
func (s *Snapshot) WithReaders(keep func(Reader) bool) *Snapshot {
	return &Snapshot{
		Groups:              keepReaders(s.Groups, keep),
		ShareGroups:         keepReaders(s.ShareGroups, keep),
		StreamsGroups:       keepReaders(s.StreamsGroups, keep),
		Connectors:          keepReaders(s.Connectors, keep),
		Consumers:           keepReaders(s.Consumers, keep),
		Queues:              keepReaders(s.Queues, keep),
		OutboxTables:        keepReaders(s.OutboxTables, keep),
		Slots:               keepReaders(s.Slots, keep),
		SQSQueues:           keepReaders(s.SQSQueues, keep),
		KinesisApps:         keepReaders(s.KinesisApps, keep),
		PubSubSubscriptions: keepReaders(s.PubSubSubscriptions, keep),
	}
}

// ReaderCount is how many readers s lists, of every kind.
func (s *Snapshot) ReaderCount() int {
	return len(s.Groups) + len(s.ShareGroups) + len(s.StreamsGroups) + len(s.Connectors) + len(s.Consumers) + len(s.Queues) +
		len(s.OutboxTables) + len(s.Slots) + len(s.SQSQueues) + len(s.KinesisApps) + len(s.PubSubSubscriptions)
}

// keepReaders are the items whose Reader keep accepts.
func keepReaders[T any, P interface {
	*T
	Reader() Reader
}](items []T, keep func(Reader) bool) []T {
	var out []T
	for i := range items {
		if keep(P(&items[i]).Reader()) {
			out = append(out, items[i])
		}
	}
	return out
}

// appendReaders appends the Reader of each of items.
func appendReaders[T any, P interface {
	*T
	Reader() Reader
}](out []Reader, items []T) []Reader {
	for i := range items {
		out = append(out, P(&items[i]).Reader())
	}
	return out
}
