package components

import "github.com/queuewatch/queuewatch/queue"

// HeadroomText is a reader's retention headroom for a facts cell: "3h 12m",
// "≈ 50m" for a projection, "now" when its oldest pending message is due,
// "—" when unknown (nothing pending, or a retention that never deletes).
func HeadroomText(h queue.Headroom) string {
	switch {
	case !h.Known:
		return "—"
	case h.Seconds <= 0:
		return "now"
	case h.Projected:
		return "≈ " + Seconds(h.Seconds)
	}
	return Seconds(h.Seconds)
}

// HeadroomTitle is the hover text of HeadroomText: the sentence with the
// setting that deletes, or why there is no figure.
func HeadroomTitle(h queue.Headroom, noun string) string {
	if !h.Known {
		return "no pending " + noun + " is due for deletion: nothing is pending, or its retention never deletes it"
	}
	return h.Sentence(noun)
}

// DLQHeadroomSentence says when the broker deletes a DLQ's oldest dead
// letter, and what keeps it: "The broker's retention: the oldest pending
// dead letter is deleted in 40m (message TTL 1d). Replay or move what
// must be kept." "" when unknown.
func DLQHeadroomSentence(h queue.Headroom) string {
	s := h.Sentence("dead letter")
	if s == "" {
		return ""
	}
	return "The broker's retention: the " + s + ". Replay or move what must be kept."
}
