package queue

// EffectiveStatus is the status q shows everywhere: the evaluated status,
// ok before any evaluation. A queue has no read error of its own: a vhost
// that could not be read lists none of its queues.
func (q *Queue) EffectiveStatus() Status { return EffectiveStatus("", q.Status) }

// Queue returns the RabbitMQ queue of vhost with the given name, if the
// snapshot has it.
func (s *Snapshot) Queue(vhost, name string) (*Queue, bool) {
	for i := range s.Queues {
		if s.Queues[i].VHost == vhost && s.Queues[i].Name == name {
			return &s.Queues[i], true
		}
	}
	return nil, false
}

// DeadLettersTo is the DLQ q's dead letters go to, if s (q's own poll)
// lists one with q among its sources in q's vhost.
func (s *Snapshot) DeadLettersTo(q *Queue) (DLQ, bool) {
	if !q.HasDeadLetter {
		return DLQ{}, false
	}
	for i := range s.DLQs {
		d := &s.DLQs[i]
		if d.VHost != q.VHost {
			continue
		}
		for _, src := range d.Sources {
			if src == q.Name {
				return *d, true
			}
		}
	}
	return DLQ{}, false
}
