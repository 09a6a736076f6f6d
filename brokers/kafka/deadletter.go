package kafka

import (
	"regexp"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/queuewatch/queuewatch/queue"
)

// dlqSuffix is what dead-letter topic names add to their source's name.
var dlqSuffix = regexp.MustCompile(`(?i)[._-](dlq|dlt|dead-?letters?|deadletter|errors?|parking-?lot)$`)

// StripDLQSuffix guesses a dead-letter topic's source from its name, for
// records that do not name it: orders.DLT → orders, payments-dlq →
// payments. It returns "" when the name has no known suffix.
func StripDLQSuffix(name string) string {
	if loc := dlqSuffix.FindStringIndex(name); loc != nil && loc[0] > 0 {
		return name[:loc[0]]
	}
	return ""
}

// Headers are a record's headers in queue's broker-neutral form.
func Headers(hs []kgo.RecordHeader) []queue.Header {
	if len(hs) == 0 {
		return nil
	}
	out := make([]queue.Header, len(hs))
	for i, h := range hs {
		out[i] = queue.Header{Key: h.Key, Value: h.Value, Kind: "bytes"}
	}
	return out
}

// OriginalTopic is the topic a dead letter came from according to the
// headers the framework that dead-lettered it wrote (Spring Kafka's
// kafka_dlt-*, Kafka Connect's __connect.errors.*, SmallRye's
// dead-letter-*), "" when they do not say. The collector labels a DLQ with
// it and a replay sends the record back there; queue.DecodeDeath, which
// the replay reads, holds the header names.
func OriginalTopic(hs []kgo.RecordHeader) string {
	return queue.DecodeDeath(Headers(hs), nil).OriginalTopic
}
