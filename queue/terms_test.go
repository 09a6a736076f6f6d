package queue

import "testing"

func TestTerms(t *testing.T) {
	tests := []struct {
		b    Broker
		want Terms
	}{
		{Kafka, Terms{Target: "queue or topic", Origin: "original queue"}},
		{RabbitMQ, Terms{Target: "queue or topic", Origin: "original queue", ByExchange: true}},
		{NATS, Terms{Target: "subject", Origin: "original subject", BySubject: true}},
		{"", Terms{Target: "queue or topic", Origin: "original queue"}},
	}
	for _, tt := range tests {
		if got := tt.b.Terms(); got != tt.want {
			t.Errorf("%q.Terms() = %+v; want %+v", tt.b, got, tt.want)
		}
	}
}
