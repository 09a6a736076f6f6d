package queue

// DLQReason is why a queue that is a DLQ is not judged by its consumers.
const DLQReason = "a dead-letter queue: nothing consuming it is normal; its depth, oldest age and growth are judged as a DLQ's"

// JudgedAsReader reports whether the queue name (in vhost, "" but for
// RabbitMQ) of s, a poll of the queue's broker, is judged by its
// consumers: not when s lists it among its DLQs. Nothing consuming a DLQ
// is normal; its health is the DLQ's (depth, oldest age, growth), which
// the DLQ list and the DLQ alerts judge. This is the one place that
// decides it: the SQS collector marks a DLQ (SQSQueue.DLQ), alerts
// evaluation judges an SQS or RabbitMQ DLQ ok, the queues table does not
// mark its missing consumers, and the alert rules leave out the same
// queues, since a queue s lists as a DLQ is one with a
// queuewatch_dlq_messages series.
func (s *Snapshot) JudgedAsReader(vhost, name string) bool {
	for i := range s.DLQs {
		if d := &s.DLQs[i]; d.VHost == vhost && d.Name == name {
			return false
		}
	}
	return true
}

// NoConsumers reports whether q has ready messages and no consumer while
// it is judged as a reader (judged is s.JudgedAsReader for q): what the
// RabbitMQ no-consumer alert fires on.
func (q *Queue) NoConsumers(judged bool) bool {
	return judged && q.Ready > 0 && q.Consumers == 0
}
