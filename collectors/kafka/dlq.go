package kafka

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	brokerkafka "github.com/queuewatch/queuewatch/brokers/kafka"
	"github.com/queuewatch/queuewatch/queue"
)

type dlqTopic struct {
	name      string
	detection queue.DLQDetection
}

// dlqTopics returns the dead-letter topics among all topics, sorted.
func (s *Source) dlqTopics(meta map[tp]partitionMeta) []dlqTopic {
	if s.opts.DLQTopic == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []dlqTopic
	for k := range meta {
		if seen[k.topic] {
			continue
		}
		seen[k.topic] = true
		if d, ok := s.opts.DLQTopic(k.topic); ok {
			out = append(out, dlqTopic{k.topic, d})
		}
	}
	slices.SortFunc(out, func(a, b dlqTopic) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	return out
}

func topicNames(ds []dlqTopic) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.name
	}
	return out
}

// cursorOf is where replay stands on a DLQ partition
// (brokerkafka.CursorPosition of the cursor group's commit).
func cursorOf(cursor kadm.FetchOffsetsResponse, po queue.PartitionOffsets) int64 {
	o, ok := cursor.Fetched.Lookup(po.Topic, po.Partition)
	return brokerkafka.CursorPosition(po.LogStart, o.At, ok && o.Err == nil)
}

// dlqHeads lists the offsets of the oldest unreplayed record of every
// non-empty DLQ partition.
func dlqHeads(ds []dlqTopic, cursor kadm.FetchOffsetsResponse, offsets offsetTable) []offsetKey {
	var out []offsetKey
	for _, d := range ds {
		for p, po := range offsets[d.name] {
			if c := cursorOf(cursor, po); c < po.End {
				out = append(out, offsetKey{d.name, p, c})
			}
		}
	}
	return out
}

// buildDLQs computes each DLQ topic's depth (records past the cursor), the
// age of its oldest unreplayed record and its source topic.
func (s *Source) buildDLQs(ds []dlqTopic, cursor kadm.FetchOffsetsResponse, offsets offsetTable, heads recordCache, now time.Time) []queue.DLQ {
	var out []queue.DLQ
	for _, d := range ds {
		parts, ok := offsets[d.name]
		if !ok {
			continue
		}
		dlq := queue.DLQ{Broker: queue.Kafka, Cluster: s.name, Name: d.name, Detection: d.detection}
		for p, po := range parts {
			c := cursorOf(cursor, po)
			dlq.Messages += max(po.End-c, 0)
			r, ok := heads[offsetKey{d.name, p, c}]
			if !ok || r.ts < 0 {
				continue
			}
			if age := now.Sub(time.UnixMilli(r.ts)); !dlq.HasOldestAge || age > dlq.OldestAge {
				dlq.OldestAge, dlq.HasOldestAge = max(age, 0), true
			}
			if r.source != "" {
				s.dlqSources[d.name] = r.source
			}
		}
		source := s.dlqSources[d.name]
		if source == "" {
			source = brokerkafka.StripDLQSuffix(d.name)
		}
		if source != "" {
			dlq.Sources = []string{source}
		}
		out = append(out, dlq)
	}
	return out
}
