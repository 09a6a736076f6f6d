package alerts

import (
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/queue"
)

func TestSQSRereadStatus(t *testing.T) {
	tests := []struct {
		name       string
		read       queue.Status
		cur        *queue.SQSQueue
		want       queue.Status
		wantReason string
	}{
		{"a replay's target grew, nothing in flight yet", queue.StatusOK, &queue.SQSQueue{Visible: 10}, queue.StatusOK, "10 visible, 0 in flight"},
		{"still no consumer", queue.StatusStop, &queue.SQSQueue{Visible: 10}, queue.StatusStop, "no consumer: 10 visible and none in flight, as at the last account read"},
		{"no consumer read, now one receives", queue.StatusStop, &queue.SQSQueue{Visible: 10, InFlight: 1}, queue.StatusOK, "10 visible, 1 in flight"},
		{"no consumer read, drained", queue.StatusStop, &queue.SQSQueue{}, queue.StatusOK, "0 visible, 0 in flight"},
		{"at the limit", queue.StatusOK, &queue.SQSQueue{Visible: 3, InFlight: 120000}, queue.StatusStall, "in flight at the SQS limit of 120,000: receives fail until some are deleted"},
		{"stall read, below the limit now", queue.StatusStall, &queue.SQSQueue{Visible: 3, InFlight: 7}, queue.StatusOK, "3 visible, 7 in flight"},
		{"a DLQ read stop, visible, nothing in flight", queue.StatusStop, &queue.SQSQueue{Visible: 10, DLQ: true}, queue.StatusOK, queue.DLQReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, reason := sqsRereadStatus(tt.read, tt.cur)
			if st != tt.want || reason != tt.wantReason {
				t.Errorf("sqsRereadStatus = %s %q, want %s %q", st, reason, tt.want, tt.wantReason)
			}
		})
	}
}

// sqsPoll is a poll of account "acct" serving its read at minute read,
// whose queue "orders" has the given counts, or the queue's re-read at
// minute m after job when job is set. A poll between reads serves the last
// read (or re-read) as it is, its time included.
func sqsPoll(m, read float64, visible, inFlight int64, job string) *queue.Snapshot {
	at := func(minute float64) time.Time { return t0.Add(time.Duration(minute * float64(time.Minute))) }
	q := queue.SQSQueue{
		Cluster: "acct", Name: "orders", ARN: "arn:aws:sqs:eu-west-1:1:orders", Visible: visible, InFlight: inFlight,
		Read: queue.DepthRead{At: at(read), Every: 4 * time.Minute},
	}
	if job != "" {
		q.Read.At, q.Read.AfterJob = at(m), job
	}
	return &queue.Snapshot{
		Broker: queue.SQS, Cluster: "acct", Time: at(m),
		SQS: &queue.SQSAccount{ReadAt: at(read), ReadEvery: 4 * time.Minute}, SQSQueues: []queue.SQSQueue{q},
	}
}

// TestSQSJudgedAcrossReads: an Evaluator judges each SQS queue against
// the account's read before the one that gave its counts, at the read and
// at every poll serving it; a re-read after a job starts from the status
// the queue had (a stop stays while nothing is in flight, and once a
// consumer took one the next re-read does not bring it back); the next
// account read compares with the read before the jobs, not with the
// re-reads. Nothing is held: a stop shows at the read that finds it.
func TestSQSJudgedAcrossReads(t *testing.T) {
	e := NewEvaluator(StatusOptions{HysteresisPolls: 2})
	for _, step := range []struct {
		name       string
		s          *queue.Snapshot
		want       queue.Status
		wantReason string
	}{
		{"first read", sqsPoll(0, 0, 4, 0, ""), queue.StatusOK, "4 visible, 0 in flight"},
		{"a poll serving it", sqsPoll(0, 0, 4, 0, ""), queue.StatusOK, "4 visible, 0 in flight"},
		{"grew, nothing in flight", sqsPoll(4, 4, 10, 0, ""), queue.StatusStop, "no consumer since 12:00 UTC (4m): 10 visible, up from 4 at the last read, and none in flight"},
		{"a poll serving it", sqsPoll(4, 4, 10, 0, ""), queue.StatusStop, "no consumer since 12:00 UTC (4m): 10 visible, up from 4 at the last read, and none in flight"},
		{"re-read, still none in flight", sqsPoll(5, 4, 12, 0, "job-1"), queue.StatusStop, "no consumer since 12:00 UTC (5m): 12 visible and none in flight, as at the last account read"},
		{"a poll serving the re-read", sqsPoll(5, 4, 12, 0, "job-1"), queue.StatusStop, "no consumer since 12:00 UTC (5m): 12 visible and none in flight, as at the last account read"},
		{"re-read, one in flight", sqsPoll(6, 4, 14, 1, "job-2"), queue.StatusOK, "14 visible, 1 in flight"},
		{"re-read, none in flight again", sqsPoll(7, 4, 14, 0, "job-3"), queue.StatusOK, "14 visible, 0 in flight"},
		{"next read, up from the read before the jobs", sqsPoll(8, 8, 14, 0, ""), queue.StatusStop, "no consumer since 12:04 UTC (4m): 14 visible, up from 10 at the last read, and none in flight"},
	} {
		e.Evaluate(step.s)
		q := step.s.SQSQueues[0]
		if q.Status != step.want || q.StatusReason != step.wantReason {
			t.Errorf("%s (%s): %s %q; want %s %q", step.name, step.s.Time.Format("15:04:05"), q.Status, q.StatusReason, step.want, step.wantReason)
		}
	}
}

func TestSQSStatus(t *testing.T) {
	tests := []struct {
		name       string
		prev, cur  *queue.SQSQueue
		want       queue.Status
		wantReason string
	}{
		{"first read", nil, &queue.SQSQueue{Visible: 10}, queue.StatusOK, "10 visible, 0 in flight"},
		{"growing, nothing in flight", &queue.SQSQueue{Visible: 4}, &queue.SQSQueue{Visible: 10}, queue.StatusStop, "no consumer: 10 visible, up from 4 at the last read, and none in flight"},
		{"growing, some in flight now", &queue.SQSQueue{Visible: 4}, &queue.SQSQueue{Visible: 10, InFlight: 2}, queue.StatusOK, "10 visible, 2 in flight"},
		{"growing, some in flight before", &queue.SQSQueue{Visible: 4, InFlight: 1}, &queue.SQSQueue{Visible: 10}, queue.StatusOK, "10 visible, 0 in flight"},
		{"steady backlog, nothing in flight", &queue.SQSQueue{Visible: 10}, &queue.SQSQueue{Visible: 10}, queue.StatusOK, "10 visible, 0 in flight"},
		{"shrinking", &queue.SQSQueue{Visible: 10}, &queue.SQSQueue{Visible: 3}, queue.StatusOK, "3 visible, 0 in flight"},
		{"in flight at the limit", &queue.SQSQueue{Visible: 5, InFlight: 120000}, &queue.SQSQueue{Visible: 9, InFlight: 120000}, queue.StatusStall, "in flight at the SQS limit of 120,000: receives fail until some are deleted"},
		// A DLQ fills with nothing in flight: that is what it is for.
		{"a DLQ growing, nothing in flight", &queue.SQSQueue{Visible: 4, DLQ: true}, &queue.SQSQueue{Visible: 10, DLQ: true}, queue.StatusOK, queue.DLQReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, reason := SQSStatus(tt.prev, tt.cur)
			if st != tt.want || reason != tt.wantReason {
				t.Errorf("SQSStatus = %s %q, want %s %q", st, reason, tt.want, tt.wantReason)
			}
		})
	}
}
