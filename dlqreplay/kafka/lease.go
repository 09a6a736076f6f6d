package kafka

import (
	"strconv"
	"strings"
	"time"
)

// lease is what the cursor's commit metadata says about the job that
// committed it last: "queuewatch-job:<id>;until=<unix ms>" while the job
// runs, the same without until once it has ended. An open transaction
// shows a running job only while a batch is in flight; between two
// batches the lease is what keeps a second instance from starting a job
// on the same DLQ. A job renews it with every commit and at least every
// half transaction timeout, so a crashed job's DLQ is free again after
// one transaction timeout.
type lease struct {
	job   string
	until time.Time // zero: released
}

const metaPrefix = "queuewatch-job:"

func (l lease) String() string {
	if l.until.IsZero() {
		return metaPrefix + l.job
	}
	return metaPrefix + l.job + ";until=" + strconv.FormatInt(l.until.UnixMilli(), 10)
}

// held reports whether the lease still holds the DLQ at now.
func (l lease) held(now time.Time) bool { return l.until.After(now) }

// parseLease reads commit metadata; anything else (another tool's
// metadata, an older queuewatch's "queuewatch-job:<id>") is a released
// lease, naming the job when it can.
func parseLease(meta string) lease {
	rest, ok := strings.CutPrefix(meta, metaPrefix)
	if !ok {
		return lease{}
	}
	id, until, _ := strings.Cut(rest, ";until=")
	l := lease{job: id}
	if ms, err := strconv.ParseInt(until, 10, 64); err == nil {
		l.until = time.UnixMilli(ms)
	}
	return l
}

// latest is the lease that runs longest; a released lease loses to any
// held one, and among released ones the first seen is kept.
func latest(a, b lease) lease {
	if b.until.After(a.until) || a.job == "" {
		return b
	}
	return a
}
