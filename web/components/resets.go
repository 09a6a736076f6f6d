package components

import "time"

// ResetView is one audited offset-reset apply, as the replays page lists
// it.
type ResetView struct {
	At                    time.Time
	Who, Cluster, Group   string
	PlanID, Result, To    string
	Error                 string
	Partitions, Committed int
	Reprocess, Skip       int64
	// Share marks a Kafka share group's reset (its start offsets).
	Share bool
}

// page is the reset group's page: a share group's or a consumer group's.
func (r ResetView) page() string {
	if r.Share {
		return ShareGroupURL(r.Cluster, r.Group)
	}
	return GroupURL(r.Cluster, r.Group)
}

// kindNote tells a share group's reset from a consumer group's in the list.
func (r ResetView) kindNote() string {
	if r.Share {
		return "share group · "
	}
	return ""
}

// resetGlyph is the result's shape, so the word is never colour alone.
func resetGlyph(result string) string {
	switch result {
	case "ok":
		return "●"
	case "partial", "stale":
		return "▲"
	}
	return "■"
}

// resetClass is the result's colour class.
func resetClass(result string) string {
	switch result {
	case "ok":
		return "st-ok"
	case "partial", "stale":
		return "st-warn"
	}
	return "st-stop"
}
