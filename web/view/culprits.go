package view

import "github.com/queuewatch/queuewatch/queue"

// JudgedPartitions finds how the evaluation judged each partition of a
// group in one lookup, where the group page and API list every partition.
type JudgedPartitions map[queue.TopicPartition]queue.PartitionStatus

// JudgedOf is g's judged partitions by topic and partition.
func JudgedOf(g *queue.ConsumerGroup) JudgedPartitions {
	m := make(JudgedPartitions, len(g.Judged))
	for _, p := range g.Judged {
		m[queue.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = p
	}
	return m
}

// Of is the partition's judgement: ok when the evaluation left it out, and
// for a group that could not be read (its status is the group's error).
func (m JudgedPartitions) Of(tp queue.TopicPartition) queue.PartitionStatus {
	if p, ok := m[tp]; ok {
		return p
	}
	return queue.PartitionStatus{Topic: tp.Topic, Partition: tp.Partition, Status: queue.StatusOK}
}
