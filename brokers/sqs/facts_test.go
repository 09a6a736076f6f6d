package sqs

import "testing"

func TestSQSParseRedrivePolicy(t *testing.T) {
	const arn = "arn:aws:sqs:eu-west-1:123456789012:orders-dlq"
	tests := []struct {
		name, in string
		want     RedrivePolicy
		wantErr  bool
	}{
		{"string count, as AWS answers", `{"deadLetterTargetArn":"` + arn + `","maxReceiveCount":"5"}`, RedrivePolicy{arn, 5}, false},
		{"number count, as clients send", `{"deadLetterTargetArn":"` + arn + `","maxReceiveCount":3}`, RedrivePolicy{arn, 3}, false},
		{"spaces in the string", `{"maxReceiveCount":" 7 ","deadLetterTargetArn":"` + arn + `"}`, RedrivePolicy{arn, 7}, false},
		{"no policy", "", RedrivePolicy{}, false},
		{"no target", `{"maxReceiveCount":5}`, RedrivePolicy{}, true},
		{"no count", `{"deadLetterTargetArn":"` + arn + `"}`, RedrivePolicy{}, true},
		{"zero count", `{"deadLetterTargetArn":"` + arn + `","maxReceiveCount":0}`, RedrivePolicy{}, true},
		{"words", `{"deadLetterTargetArn":"` + arn + `","maxReceiveCount":"five"}`, RedrivePolicy{}, true},
		{"not JSON", `deadLetterTargetArn=x`, RedrivePolicy{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRedrivePolicy(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseRedrivePolicy(%s) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestSQSQueueNames(t *testing.T) {
	for arn, want := range map[string]string{
		"arn:aws:sqs:eu-west-1:123456789012:orders-dlq":        "orders-dlq",
		"arn:aws-us-gov:sqs:us-gov-west-1:123456789012:a.fifo": "a.fifo",
		"arn:aws:sqs:us-east-1:000000000000:qw-x-1-2":          "qw-x-1-2",
		"arn:aws:sns:eu-west-1:123456789012:topic":             "",
		"orders-dlq":                          "",
		"arn:aws:sqs:eu-west-1:123456789012:": "",
	} {
		got, err := QueueNameFromARN(arn)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("QueueNameFromARN(%q) = %q, %v; want %q", arn, got, err, want)
		}
	}
	for u, want := range map[string]string{
		"https://sqs.eu-west-1.amazonaws.com/123456789012/orders": "orders",
		"http://127.0.0.1:9324/000000000000/orders.fifo":          "orders.fifo",
		"orders": "orders",
	} {
		if got := QueueNameFromURL(u); got != want {
			t.Errorf("QueueNameFromURL(%q) = %q, want %q", u, got, want)
		}
	}
	if !IsFIFO("orders.fifo") || IsFIFO("orders") || IsFIFO("fifo-orders") {
		t.Error("IsFIFO is wrong")
	}
}
