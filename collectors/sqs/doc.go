// Package sqs polls one Amazon SQS account (or an SQS-compatible server)
// through its brokers/sqs access.
//
// A poll lists the queue URLs under the configured prefix (ListQueues,
// 1,000 names a page), keeps the names the include and exclude patterns
// select, and reads each queue's attributes (GetQueueAttributes All, a few
// at a time): visible, in-flight and delayed counts, FIFO, visibility
// timeout, retention and the RedrivePolicy. DLQs are found from that
// topology alone: a queue named by another's deadLetterTargetArn is a DLQ of
// that source, and its depth is every message it holds. ListDeadLetterSourceQueues
// is not needed (and would cost a request per queue) because every watched
// queue's policy is read anyway. A DLQ once found stays listed, at 0 when
// its queue is gone, so its series drops to 0 instead of vanishing.
//
// No status is judged here: a queue's status is judged by alerts
// evaluation, like every reader's, from this read and the account's
// previous one ("no consumer" for a visible backlog that grew with nothing
// in flight at either read, stall at SQS's in-flight limit). A read marks
// what that needs: which queues are DLQs (SQSQueue.DLQ), when the counts
// were read (SQSAccount.ReadAt) and whether a job's re-read gave them
// (SQSQueue.Read).
//
// SQS's API tells no message's age, and a poll must not receive (a
// receive hides a message and spends its delivery limit). A queue's oldest
// age is therefore estimated from what the replay backend's browses and
// jobs received, which the shared brokers/sqs.Cluster keeps: the oldest
// SentTimestamp seen, a lower bound while the browse did not reach the
// oldest message. It is forgotten when a read finds the queue empty and
// when a job deletes from it.
//
// AWS bills every request, about one per queue per poll, so an account is
// read at most every Options.Interval (config sqs[].poll_interval, 4
// minutes by default); a poll in between returns the last snapshot
// unchanged, so the account's last success is its last read. A queue that cannot be read is that queue's error and a
// Partial entry; only a failed listing fails the poll.
package sqs
