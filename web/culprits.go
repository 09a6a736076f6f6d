package web

import "github.com/queuewatch/queuewatch/queue"

// judgedPartitions finds how the evaluation judged each partition of a
// group in one lookup, where the group page and API list every partition.
type judgedPartitions map[queue.TopicPartition]queue.PartitionStatus

func judgedOf(g *queue.ConsumerGroup) judgedPartitions {
	m := make(judgedPartitions, len(g.Judged))
	for _, p := range g.Judged {
		m[queue.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = p
	}
	return m
}

// of is the partition's judgement: ok when the evaluation left it out, and
// for a group that could not be read (its status is the group's error).
func (m judgedPartitions) of(tp queue.TopicPartition) queue.PartitionStatus {
	if p, ok := m[tp]; ok {
		return p
	}
	return queue.PartitionStatus{Topic: tp.Topic, Partition: tp.Partition, Status: queue.StatusOK}
}
