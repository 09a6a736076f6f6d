package queue

import "slices"

// A DLQ names what dead-letters into it (DLQ.Sources): Kafka topics,
// RabbitMQ queues of its vhost, SQS queues, the JetStream stream whose
// dead letters it captures. The readers that read those sources are where
// its messages came from, and the pages of both link to each other:
// "this group's records die in orders.DLT", "orders.DLT ← orders, read by
// orders-processor". Both directions are found in one snapshot, so a
// scoped view (which lists only what its principal may see) links only to
// what that principal may see.

// readerSources is a reader and what it reads, named as a DLQ names its
// sources.
type readerSources struct {
	reader Reader
	vhost  string
	reads  []string
}

// readerSources lists every reader of s that reads something a DLQ can
// name as its source, one line per kind of reader as Readers does.
func (s *Snapshot) readerSources() []readerSources {
	var out []readerSources
	for i := range s.Groups {
		g := &s.Groups[i]
		out = append(out, readerSources{reader: g.Reader(), reads: topicsOf(g.Partitions, func(p PartitionLag) string { return p.Topic })})
	}
	for i := range s.ShareGroups {
		g := &s.ShareGroups[i]
		out = append(out, readerSources{reader: g.Reader(), reads: topicsOf(g.Partitions, func(p SharePartition) string { return p.Topic })})
	}
	for i := range s.Connectors {
		c := &s.Connectors[i]
		out = append(out, readerSources{reader: c.Reader(), reads: c.Topics})
	}
	for i := range s.Consumers {
		c := &s.Consumers[i]
		out = append(out, readerSources{reader: c.Reader(), reads: []string{c.Stream}})
	}
	for i := range s.Queues {
		q := &s.Queues[i]
		out = append(out, readerSources{reader: q.Reader(), vhost: q.VHost, reads: []string{q.Name}})
	}
	for i := range s.SQSQueues {
		q := &s.SQSQueues[i]
		out = append(out, readerSources{reader: q.Reader(), reads: []string{q.Name}})
	}
	return out
}

// topicsOf is the distinct topics of partitions, which are kept sorted
// by topic.
func topicsOf[T any](parts []T, topic func(T) string) []string {
	var out []string
	for _, p := range parts {
		if t := topic(p); len(out) == 0 || out[len(out)-1] != t {
			out = append(out, t)
		}
	}
	return out
}

// feeds reports whether rs reads one of d's sources.
func (rs *readerSources) feeds(d *DLQ) bool {
	if rs.vhost != d.VHost {
		return false
	}
	for _, src := range d.Sources {
		if slices.Contains(rs.reads, src) {
			return true
		}
	}
	return false
}

// ReadersOf lists the readers of s that read d's sources, the readers
// whose failures d holds, in the order Readers lists them.
func (s *Snapshot) ReadersOf(d *DLQ) []Reader {
	var out []Reader
	for _, rs := range s.readerSources() {
		if rs.feeds(d) {
			out = append(out, rs.reader)
		}
	}
	return out
}

// DLQsOf lists the DLQs of s whose sources the reader r reads: where its
// messages die.
func (s *Snapshot) DLQsOf(r Reader) []DLQ {
	var out []DLQ
	for _, rs := range s.readerSources() {
		if rs.reader.ID() != r.ID() || rs.reader.Title != r.Title {
			continue
		}
		for i := range s.DLQs {
			if d := &s.DLQs[i]; rs.feeds(d) {
				out = append(out, *d)
			}
		}
		return out
	}
	return nil
}
