package queue

import (
	"net/url"
	"time"
)

// Kinesis is Amazon Kinesis Data Streams: a cluster is one account and
// region, its readers are the Kinesis Client Library (KCL) applications
// whose lease tables queuewatch reads.
const Kinesis Broker = "kinesis"

// KinesisStream is one stream as of a read: its shards, retention and
// enhanced fan-out consumers.
type KinesisStream struct {
	Cluster   string
	Name      string
	Status    string
	Retention time.Duration
	Shards    []KinesisShard
	// Consumers are the enhanced fan-out consumers registered on it.
	Consumers []string
	Err       string
}

// KinesisShard is one shard of a stream.
type KinesisShard struct {
	ID string
	// Parents are the shards it was split or merged from.
	Parents []string
	// Open is false once a reshard closed it.
	Open bool
}

// OpenShards is how many of s's shards are open.
func (s *KinesisStream) OpenShards() int {
	n := 0
	for _, sh := range s.Shards {
		if sh.Open {
			n++
		}
	}
	return n
}

// KinesisApplication is one KCL application as of a read of its lease
// table and of the stream at each checkpoint: a reader.
type KinesisApplication struct {
	Cluster    string
	Name       string
	Stream     string
	LeaseTable string
	// FailoverTime is the application's failoverTimeMillis: a lease not
	// renewed for longer may be taken over.
	FailoverTime time.Duration
	// Retention is the stream's, for the headroom; 0 when unknown.
	Retention time.Duration
	Leases    []KinesisLease
	// Unleased are open shards of the stream that have no lease: no
	// worker of the application reads them.
	Unleased []string
	// Err is why the lease table (or the stream) could not be read.
	Err string

	// Status and StatusReason are alerts.KinesisStatus over the previous
	// read and this one, filled by alerts evaluation.
	Status       Status
	StatusReason string
	// StatusSince is when the current non-ok condition began (see Onset);
	// zero when ok.
	StatusSince time.Time
	// Headroom is RetentionHeadroom as of the read, set by the collector.
	Headroom Headroom
}

// KinesisLease is one lease of an application: a shard, who holds it, how
// far it was read, and how far that is behind the shard's newest record.
type KinesisLease struct {
	Shard string
	Owner string
	// Counter is leaseCounter: it moves on every renewal and take.
	Counter int64
	// Checkpoint is a sequence number or a sentinel (TRIM_HORIZON, LATEST,
	// AT_TIMESTAMP, SHARD_END).
	Checkpoint    string
	OwnerSwitches int64
	Parents       []string
	Children      []string
	// Open is whether the stream lists the shard as open.
	Open bool

	// Behind is MillisBehindLatest read at the checkpoint: how far the
	// checkpointed record is behind the shard's newest; HasLag is set when
	// it was read.
	Behind time.Duration
	HasLag bool
	// Arrival is when the checkpointed record arrived; zero when unknown.
	Arrival time.Time
	// LagErr is why the read at the checkpoint failed.
	LagErr string
}

// Finished reports whether the lease's shard was read to its end.
func (l *KinesisLease) Finished() bool { return l.Checkpoint == "SHARD_END" }

// Owners is how many distinct workers hold a lease of a.
func (a *KinesisApplication) Owners() int {
	seen := map[string]bool{}
	for _, l := range a.Leases {
		if l.Owner != "" {
			seen[l.Owner] = true
		}
	}
	return len(seen)
}

// Lag is the largest time lag of a's leases (MillisBehindLatest at the
// checkpoint) and the shard it is on; ok is false when none was read.
func (a *KinesisApplication) Lag() (lag time.Duration, shard string, ok bool) {
	for _, l := range a.Leases {
		if l.HasLag && (!ok || l.Behind > lag) {
			lag, shard, ok = l.Behind, l.Shard, true
		}
	}
	return lag, shard, ok
}

// RetentionHeadroom is how long until the stream drops the oldest
// checkpointed record still behind its shard's newest: the retention less
// that record's age at now. The record at a checkpoint was already
// processed, so the first unprocessed one is a little younger: the figure
// is a lower bound.
//
// Worked example: retention 24h, a checkpoint whose record arrived 20h
// ago and is behind: 4h.
func (a *KinesisApplication) RetentionHeadroom(now time.Time) Headroom {
	var h Headroom
	for _, l := range a.Leases {
		if !l.HasLag || l.Behind == 0 || l.Arrival.IsZero() {
			continue
		}
		o := AgeHeadroom(a.Retention, now.Sub(l.Arrival), "retention")
		o.Where = l.Shard
		h = h.Sooner(o)
	}
	return h
}

// EffectiveStatus is the status a shows everywhere (see EffectiveStatus).
func (a *KinesisApplication) EffectiveStatus() Status { return EffectiveStatus(a.Err, a.Status) }

// EffectiveReason is the sentence that goes with a's EffectiveStatus.
func (a *KinesisApplication) EffectiveReason() string { return EffectiveReason(a.Err, a.StatusReason) }

// ShardsBehind is how many of a's leases were read behind their shard's
// newest record.
func (a *KinesisApplication) ShardsBehind() int64 {
	var n int64
	for _, l := range a.Leases {
		if l.HasLag && l.Behind > 0 {
			n++
		}
	}
	return n
}

// unread reports whether a read at some lease's checkpoint failed.
func (a *KinesisApplication) unread() bool {
	for _, l := range a.Leases {
		if l.LagErr != "" {
			return true
		}
	}
	return false
}

// Reader is a in the shape every reader shares. Its lag age is the
// largest MillisBehindLatest at a checkpoint. Kinesis sequence numbers are
// not dense, so no count of records behind is known: the backlog counts
// the shards behind instead. Its members are the workers holding leases.
func (a *KinesisApplication) Reader() Reader {
	r := Reader{
		Broker: Kinesis, Cluster: a.Cluster, Name: a.Name, Title: a.Name,
		Status: a.EffectiveStatus(), Reason: a.EffectiveReason(), StatusSince: a.StatusSince,
		Backlog: a.ShardsBehind(), BacklogUnit: UnitShards, BacklogKnown: true,
		LagBasis: LagUnknown, Headroom: a.Headroom, Members: a.Owners(), Err: a.Err,
		Page: KinesisApplicationPage(a.Cluster, a.Name),
	}
	if lag, _, ok := a.Lag(); ok {
		r.LagSeconds, r.LagBasis = lag.Seconds(), LagExact
	}
	if a.unread() {
		// A shard not read at its checkpoint this time may be the one
		// behind: the lag is a lower bound and the count unknown, so the
		// read charts no false drop.
		r.BacklogKnown = false
		if r.LagBasis == LagExact {
			r.LagBasis = LagEstimate
		}
	}
	return r.known()
}

// KinesisApplicationPage is the path of a KCL application's page:
// /kinesis/{account}/applications/{application}, every segment escaped.
func KinesisApplicationPage(cluster, name string) string {
	return "/kinesis/" + url.PathEscape(cluster) + "/applications/" + url.PathEscape(name)
}

// KinesisAccount is what a poll of a Kinesis account learned besides its
// streams and applications: when it was read and what reading costs.
type KinesisAccount struct {
	// ReadAt is when the account was last read; polls in between serve
	// that read.
	ReadAt    time.Time
	ReadEvery time.Duration
	// Requests are the requests sent since queuewatch started, per
	// action (Kinesis and DynamoDB), sorted by action.
	Requests []SQSRequests
}

// KinesisShardReadsPerSecond is how many GetRecords calls a shard serves a
// second, to every shared-throughput reader together (GetShardIterator has
// a like limit of its own).
const KinesisShardReadsPerSecond = 5

// KinesisReadShare is the share of a shard's GetRecords budget that
// reading an application's lag at its checkpoint once every interval
// takes: one GetRecords per interval. Once a minute: 1 / (5 × 60) =
// 0.33%.
func KinesisReadShare(every time.Duration) float64 {
	if every <= 0 {
		return 0
	}
	return 1 / (KinesisShardReadsPerSecond * every.Seconds())
}

// KinesisApp returns the KCL application with the given name, if the
// snapshot has it.
func (s *Snapshot) KinesisApp(name string) (*KinesisApplication, bool) {
	for i := range s.KinesisApps {
		if s.KinesisApps[i].Name == name {
			return &s.KinesisApps[i], true
		}
	}
	return nil, false
}

// KinesisStream returns the stream with the given name, if the snapshot
// shows it.
func (s *Snapshot) KinesisStream(name string) (*KinesisStream, bool) {
	for i := range s.KinesisStreams {
		if s.KinesisStreams[i].Name == name {
			return &s.KinesisStreams[i], true
		}
	}
	return nil, false
}
