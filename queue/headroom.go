package queue

import (
	"math"
	"time"
)

// Headroom is how long a reader has before the broker deletes the oldest
// message it has not read yet: the retention headroom. Lag says a backlog
// is late; headroom says whether it is about to be lost.
//
// Known is false where retention is infinite or unknown, and for a reader
// with no backlog (nothing pending can be lost). Projected is set when
// Seconds comes from a trend rather than a clock: a size or count limit
// (Kafka retention.bytes, JetStream max_msgs/max_bytes, RabbitMQ
// x-max-length) deletes the head when enough arrives behind it, so its
// headroom is only as good as the rates it was projected from.
type Headroom struct {
	// Seconds is the time left, 0 when the oldest pending message is
	// already due for deletion.
	Seconds   float64
	Known     bool
	Projected bool
	// Limit names the setting that deletes the message, with its value:
	// "retention.ms 7d", "max_age 1h", "retention.bytes (projected)".
	Limit string
	// Where is the part of the reader the figure is for when it has parts
	// ("orders/3" for a Kafka partition); "" otherwise.
	Where string
	// Retention is the age limit in seconds when the figure comes from
	// one (AgeHeadroom), for AtRisk; 0 otherwise.
	Retention float64 `json:",omitzero"`
}

// AgeHeadroom is the headroom of a message age old under a retention of
// limit: how long until its age reaches limit, never below zero. A zero
// or negative limit means no limit and gives an unknown headroom.
//
// Worked example: a record 40m old on a topic with retention.ms 1h has
// AgeHeadroom(1h, 40m) = 20m.
func AgeHeadroom(limit, age time.Duration, name string) Headroom {
	if limit <= 0 {
		return Headroom{}
	}
	return Headroom{Seconds: max(limit-age, 0).Seconds(), Known: true, Limit: name + " " + HumanDuration(limit), Retention: limit.Seconds()}
}

// ProjectedHeadroom is the headroom of the oldest pending message when a
// size or count limit deletes from the head: gap is how far the head the
// broker keeps is from it (messages, or bytes), and closing how fast that
// gap shrinks (per second): the rate at which the broker deletes from the
// head less the rate at which the reader reads past it. It is unknown when
// the gap is not closing.
//
// Worked example: a partition whose log start is 6,000 offsets below the
// committed one, moving up at 5 offsets/s while the group commits 3/s,
// has ProjectedHeadroom(6000, 5-3) = 3,000 s (50m).
func ProjectedHeadroom(gap int64, closing float64, limit string) Headroom {
	if closing <= 0 || math.IsNaN(closing) || math.IsInf(closing, 0) {
		return Headroom{}
	}
	return Headroom{Seconds: float64(max(gap, 0)) / closing, Known: true, Projected: true, Limit: limit}
}

// Sooner is whichever of h and o runs out first; an unknown headroom
// never wins over a known one.
func (h Headroom) Sooner(o Headroom) Headroom {
	switch {
	case !o.Known:
		return h
	case !h.Known || o.Seconds < h.Seconds:
		return o
	}
	return h
}

// Below reports whether h is known and shorter than d.
func (h Headroom) Below(d time.Duration) bool { return h.Known && h.Seconds < d.Seconds() }

// AtRisk reports whether h says a loss may come: a projection (the gap to
// the head the broker keeps is closing), or an age limit the oldest
// pending message is past half of. A reader that keeps a few seconds
// behind on a stream with max_age 1h is always under an hour from it and
// loses nothing; one whose oldest pending message is 40 minutes old is
// falling toward the limit. What raises a reader's status and exports the
// figure QueuewatchDataLossImminent fires on is AtRisk and Below the
// threshold.
func (h Headroom) AtRisk() bool {
	return h.Known && (h.Projected || h.Retention <= 0 || h.Seconds <= h.Retention/2)
}

// Sentence says h for people: "oldest pending record is deleted in 3h 12m
// (retention.ms 7d)", with "at this rate" for a projection. noun is what
// the broker calls a message ("record", "message"); "" when h is unknown.
func (h Headroom) Sentence(noun string) string {
	if !h.Known {
		return ""
	}
	s := "oldest pending " + noun
	if h.Where != "" {
		s += " (" + h.Where + ")"
	}
	switch {
	case h.Seconds <= 0:
		s += " is due for deletion now"
	default:
		s += " is deleted in " + HumanSeconds(h.Seconds)
	}
	if h.Projected {
		s += " at this rate"
	}
	if h.Limit != "" {
		s += " (" + h.Limit + ")"
	}
	return s
}

// DLQHeadroom is how long until the broker deletes d's oldest dead letter,
// as d's own queue in s (d's poll) tells it: the RetentionHeadroom of a
// RabbitMQ DLQ queue (its message TTL or max-length; none when it
// dead-letters in turn, as its expired letters are then moved, not lost;
// the TTL against the head's publish timestamp, so at the earliest)
// or of an SQS DLQ queue (MessageRetentionPeriod, from the original
// enqueue for a standard queue). A DLQ that is no queue of its poll has
// none: a Kafka DLT's retention.ms is read only for the topics lagging
// groups read, and a JetStream DLQ's letters live in the dead-letter
// stream, whose limits the DLQ does not carry.
//
// Worked example: an SQS DLQ with a retention of 4h whose oldest letter
// was seen while browsing 3h 20m old: 40m.
func (s *Snapshot) DLQHeadroom(d *DLQ) Headroom {
	if q, ok := s.Queue(d.VHost, d.Name); ok {
		h := q.RetentionHeadroom()
		if h.Known && !h.Projected {
			// The head's age is from its publisher's timestamp, but
			// RabbitMQ counts a DLQ's TTL from the dead-lettering: the
			// figure is the earliest the letter may go.
			h.Limit += ", or later: the age is from the publish, RabbitMQ's TTL from the dead-lettering"
		}
		return h
	}
	if q, ok := s.SQSQueue(d.Name); ok {
		return q.RetentionHeadroom()
	}
	return Headroom{}
}
