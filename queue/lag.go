package queue

// Lag computes how far a group is behind on one partition.
//
// end is the offset lag is measured against: the high watermark, or the last
// stable offset for read_committed groups. A partition the group never
// committed counts every record still on the broker (end − logStart), as does
// a committed offset below logStart, whose missing records were deleted by
// retention before the group read them: those are returned as lost. Lag never
// goes negative (a commit can race ahead of a listed end offset).
//
// Worked example: logStart 100, end 250.
//
//	committed 200            → lag 50,  lost 0
//	no commit                → lag 150, lost 0
//	committed 40             → lag 150, lost 60 (records 40..99 are gone)
//	committed 260 (raced)    → lag 0,   lost 0
func Lag(committed int64, hasCommit bool, logStart, end int64) (lag, lost int64) {
	from := committed
	switch {
	case !hasCommit || committed < 0:
		from = logStart
	case committed < logStart:
		lost = logStart - committed
		from = logStart
	}
	return max(end-from, 0), lost
}
