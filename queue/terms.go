package queue

// Terms are a broker's own words for where dead letters came from and go
// back to, which the shared DLQ page shows. They are data, one line per
// broker in brokerTerms next to the Broker names, so that pages never
// branch on a broker's name; a broker whose words are the common ones
// (Kafka's) needs no line.
type Terms struct {
	// Target is what a move publishes to: "queue or topic", "subject".
	Target string
	// Origin is what a plain replay returns a message to when its DLQ has
	// no single source: "original queue", "original subject".
	Origin string
	// BySubject is true when a dead letter was routed by the subject it
	// was published to: its death's routing keys and original topic are
	// that subject, not exchange routing keys or a Kafka topic.
	BySubject bool
	// ByExchange is true when a replay's target is "exchange/routing-key",
	// an empty exchange being the default one.
	ByExchange bool
}

// commonTerms are the words of brokers that route through queues and
// topics.
var commonTerms = Terms{Target: "queue or topic", Origin: "original queue"}

// brokerTerms are the brokers whose words differ from commonTerms.
var brokerTerms = map[Broker]Terms{
	NATS:     {Target: "subject", Origin: "original subject", BySubject: true},
	RabbitMQ: {Target: commonTerms.Target, Origin: commonTerms.Origin, ByExchange: true},
}

// Terms are b's words (see Terms); commonTerms for a broker with no line.
func (b Broker) Terms() Terms {
	if t, ok := brokerTerms[b]; ok {
		return t
	}
	return commonTerms
}
