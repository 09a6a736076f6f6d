package queue

// RetentionHeadroom is how long until RabbitMQ removes q's head, the
// oldest message its consumers have not been delivered: the soonest of
//
//   - the queue's message TTL less the head's age (head_message_timestamp,
//     known only when publishers set the timestamp property);
//   - with a max-length and overflow drop-head, the room left in the queue
//     over the rate its ready messages grow at (produced less consumed,
//     over the status window, so it is set once the queue's ETA is): the
//     head is dropped once the queue is full. A projection.
//
// A queue with a dead-letter exchange loses nothing that way: expired and
// dropped messages are dead-lettered, and its DLQ's limits apply to them
// there, so it has no headroom; nor has an empty queue. A per-message TTL
// (the expiration property) and x-max-length-bytes are not seen: the
// management API tells neither per message nor the ready bytes this
// collector reads.
//
// Worked example: max-length 1,000 with 800 ready, growing 4/s: 50s.
func (q *Queue) RetentionHeadroom() Headroom {
	if q.HasDeadLetter || q.Ready == 0 {
		return Headroom{}
	}
	var h Headroom
	if q.MessageTTL > 0 && q.HasHeadAge {
		h = AgeHeadroom(q.MessageTTL, q.HeadMessageAge, "message TTL")
	}
	if q.DropHead && q.MaxLength > 0 && q.ETA.Rates {
		limit := "max-length " + ExactCount(q.MaxLength) + ", drop-head"
		h = h.Sooner(ProjectedHeadroom(q.MaxLength-q.Ready, q.ETA.ProduceRate-q.ETA.ConsumeRate, limit))
	}
	return h
}
