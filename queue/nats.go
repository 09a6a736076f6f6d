package queue

import "time"

// Stream is one NATS JetStream stream, as its leader reports it.
type Stream struct {
	Cluster   string
	Name      string
	Subjects  []string
	Retention string // limits, interest, workqueue
	Messages  uint64
	Bytes     uint64
	FirstSeq  uint64
	LastSeq   uint64
	Consumers int
	// LastTime is when the last message was stored.
	LastTime time.Time
	// MaxAge, MaxMsgs and MaxBytes are the stream's limits (0 for none);
	// DiscardOld is set when reaching MaxMsgs or MaxBytes deletes the
	// oldest messages (discard: old) rather than refusing new ones. The
	// server deletes messages older than MaxAge whatever the discard
	// policy.
	MaxAge     time.Duration `json:",omitempty"`
	MaxMsgs    int64         `json:",omitempty"`
	MaxBytes   int64         `json:",omitempty"`
	DiscardOld bool          `json:",omitempty"`
}

// StreamConsumer is one JetStream consumer: the NATS counterpart of a Kafka
// consumer group, with the same status vocabulary.
type StreamConsumer struct {
	Cluster string
	Stream  string
	Name    string
	// Pull is true for a pull consumer, false for a push consumer.
	Pull          bool
	FilterSubject []string
	// Pending is num_pending: matching messages not yet delivered.
	Pending uint64
	// AckPending is num_ack_pending: delivered, not yet acknowledged.
	AckPending    int
	MaxAckPending int
	Redelivered   int
	// Waiting is num_waiting: pull requests waiting for messages.
	Waiting int
	// PushBound is true when a push consumer has a subscriber bound.
	PushBound bool
	// Paused is true while the consumer is paused (nats-server 2.11+);
	// PauseUntil is when the server resumes it by itself.
	Paused     bool
	PauseUntil time.Time
	// DeliveredSeq and AckFloorSeq are stream sequences.
	DeliveredSeq uint64
	AckFloorSeq  uint64
	MaxDeliver   int
	// LagSeconds is the age of the next undelivered message, from its
	// stored timestamp; HasLagSeconds is false until it is known.
	LagSeconds    float64
	HasLagSeconds bool
	Err           string

	Status       Status
	StatusReason string
	// StatusSince is when the current non-ok condition began (see Onset);
	// zero when ok.
	StatusSince time.Time
	// ETA and its rates are filled by the status evaluation from the
	// stream sequences of the window's polls (see RatesUnknown).
	ETA ETA
	// Headroom is how long until the stream's limits delete the next
	// message the consumer has not been delivered (collectors fill it).
	Headroom Headroom `json:",omitzero"`
}

// RatesUnknown says why c's consume and produce rates cannot be known
// from stream sequences, "" when they can: a filtered consumer's stream
// stores and acknowledges messages of other subjects too.
func (c *StreamConsumer) RatesUnknown() string {
	if len(c.FilterSubject) > 0 {
		return "a filtered consumer: the stream's sequences count other subjects too, so its own rates are not known"
	}
	return ""
}

// EffectiveStatus is the status c shows everywhere (see EffectiveStatus).
func (c *StreamConsumer) EffectiveStatus() Status { return EffectiveStatus(c.Err, c.Status) }

// EffectiveReason is the sentence that goes with c's EffectiveStatus.
func (c *StreamConsumer) EffectiveReason() string { return EffectiveReason(c.Err, c.StatusReason) }

// Stream returns the stream with the given name, if the snapshot has it.
func (s *Snapshot) Stream(name string) (*Stream, bool) {
	for i := range s.Streams {
		if s.Streams[i].Name == name {
			return &s.Streams[i], true
		}
	}
	return nil, false
}

// Consumer returns the consumer of stream with the given name, if the
// snapshot has it.
func (s *Snapshot) Consumer(stream, name string) (*StreamConsumer, bool) {
	for i := range s.Consumers {
		if s.Consumers[i].Stream == stream && s.Consumers[i].Name == name {
			return &s.Consumers[i], true
		}
	}
	return nil, false
}

// ConsumerPoint is one poll's numbers of a JetStream consumer: what its
// page charts. HasLagSeconds is false while the lag was not known, so a
// chart draws a gap rather than a false zero.
type ConsumerPoint struct {
	At            time.Time
	Pending       int64
	AckPending    int
	LagSeconds    float64
	HasLagSeconds bool
}
