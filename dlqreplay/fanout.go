package dlqreplay

import "context"

// subjectConsumers is a Backend whose DLQs replay to a subject that
// several consumers may read (NATS): a replay reaches all of them.
type subjectConsumers interface {
	SubjectConsumers(ctx context.Context, stream, subject string) ([]string, error)
}

// SubjectConsumers names the consumers of stream that read subject, for a
// DLQ whose backend replays to subjects; nil for other brokers. The DLQ
// page warns with it that a replay to the original subject redelivers to
// every one of them, not only to the consumer that dead-lettered.
func (s *Service) SubjectConsumers(ctx context.Context, dlqID, stream, subject string) ([]string, error) {
	_, b, err := s.backend(dlqID)
	if err != nil {
		return nil, err
	}
	sc, ok := b.(subjectConsumers)
	if !ok {
		return nil, nil
	}
	return sc.SubjectConsumers(ctx, stream, subject)
}
