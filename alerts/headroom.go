package alerts

import (
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

// headroomSaid is how near a loss must be for a reader that is already
// not ok to say it: within a day, as the headroom series is exported
// (collectors.HeadroomHorizon). A week away is no news in a line read at
// a glance, and would follow every lagging reader of a default topic.
const headroomSaid = 24 * time.Hour

// withHeadroom adds a reader's retention headroom h to its judgement raw
// and sentence reason: a reader the window finds ok whose oldest pending
// message is deleted within the headroom threshold is warn, with the
// headroom as its sentence, and a reader already not ok says its headroom
// after its own sentence when it is under headroomSaid. Lag alone cannot tell a backlog that is only
// late from one about to be lost; this puts the second in front of people
// (the reader's page and "Needs attention"). noun is the broker's word for
// a message.
func (e *Evaluator) withHeadroom(raw queue.Status, h queue.Headroom, noun string, reason func(since time.Time) string) (queue.Status, func(since time.Time) string) {
	switch {
	case !h.Known || raw == queue.StatusError:
		return raw, reason
	case raw == queue.StatusOK && h.Below(e.headroomLow) && h.AtRisk():
		return queue.StatusWarn, func(time.Time) string { return h.Sentence(noun) }
	case raw == queue.StatusOK, !h.Below(headroomSaid):
		return raw, reason
	}
	return raw, func(since time.Time) string {
		if r := reason(since); r != "" {
			return r + "; " + h.Sentence(noun)
		}
		return h.Sentence(noun)
	}
}

// sqsHeadroom adds q's retention headroom to the status SQSStatus judged
// from two reads, as withHeadroom does for the other readers. A DLQ keeps its DLQ sentence: it is not
// judged as a reader, and QueuewatchDataLossImminent speaks for its
// expiring letters.
func (e *Evaluator) sqsHeadroom(q *queue.SQSQueue) {
	if q.DLQ || q.EffectiveStatus() == queue.StatusError {
		return
	}
	reason := q.StatusReason
	st, text := e.withHeadroom(q.Status, q.RetentionHeadroom(), "message", func(time.Time) string { return reason })
	q.Status, q.StatusReason = st, text(time.Time{})
}
