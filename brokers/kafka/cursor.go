package kafka

// CursorPosition is where replay stands on one partition of a dead-letter
// topic: the offset of the next record to replay. The collector counts the
// DLQ's depth from it (end − position) and the replay backend scans from
// it, so both must compute it here, the same way.
//
// commit is the cursor group's committed offset on the partition and
// committed whether it has one (a commit that failed to fetch counts as
// none). The position is the commit, unless there is none or retention has
// deleted the records before it; then it is the log start, because every
// record still in the partition is unreplayed.
//
// For example, a partition with log start 40 and end offset 100:
//
//	commit              position  depth (100 − position)
//	none                40        60   nothing replayed yet
//	55                  55        45   the records before 55 were replayed
//	12                  40        60   retention deleted 12..39 before they were replayed
//	100                 100       0    everything replayed
//
// A commit past the end (a topic deleted and created again) is returned as
// it is; callers clamp the depth at zero.
func CursorPosition(logStart, commit int64, committed bool) int64 {
	if committed && commit >= logStart {
		return commit
	}
	return logStart
}
