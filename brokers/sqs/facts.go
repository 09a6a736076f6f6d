package sqs

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// RedrivePolicy is a queue's RedrivePolicy attribute: after MaxReceiveCount
// receives without a delete, SQS moves a message to the queue named by
// DeadLetterTargetARN.
type RedrivePolicy struct {
	DeadLetterTargetARN string
	MaxReceiveCount     int
}

// ParseRedrivePolicy reads a RedrivePolicy attribute, such as
//
//	{"deadLetterTargetArn":"arn:aws:sqs:eu-west-1:123456789012:orders-dlq","maxReceiveCount":"5"}
//
// maxReceiveCount is a JSON string in what AWS returns and a number in what
// most clients send (and some servers echo), so both are accepted. An
// empty attribute is no policy: the zero RedrivePolicy and no error.
func ParseRedrivePolicy(s string) (RedrivePolicy, error) {
	if strings.TrimSpace(s) == "" {
		return RedrivePolicy{}, nil
	}
	var raw struct {
		Target string          `json:"deadLetterTargetArn"`
		Max    json.RawMessage `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return RedrivePolicy{}, fmt.Errorf("redrive policy: %w", err)
	}
	if raw.Target == "" {
		return RedrivePolicy{}, errors.New("redrive policy: no deadLetterTargetArn")
	}
	n, err := receiveCount(raw.Max)
	if err != nil {
		return RedrivePolicy{}, err
	}
	return RedrivePolicy{DeadLetterTargetARN: raw.Target, MaxReceiveCount: n}, nil
}

// receiveCount is maxReceiveCount as a number or a string holding one.
func receiveCount(raw json.RawMessage) (int, error) {
	text := strings.TrimSpace(string(raw))
	if unq, err := strconv.Unquote(text); err == nil {
		text = unq
	}
	n, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("redrive policy: maxReceiveCount %s is not a positive number", raw)
	}
	return n, nil
}

// QueueNameFromARN is the queue name in an SQS ARN
// (arn:aws:sqs:eu-west-1:123456789012:orders-dlq → orders-dlq).
func QueueNameFromARN(arn string) (string, error) {
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sqs" || parts[5] == "" {
		return "", fmt.Errorf("%q is not an SQS queue ARN", arn)
	}
	return parts[5], nil
}

// QueueNameFromURL is the queue name in a queue URL, its last path
// segment (https://sqs.eu-west-1.amazonaws.com/123456789012/orders →
// orders); the whole string when it has no path.
func QueueNameFromURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" {
		return raw
	}
	return path.Base(u.Path)
}

// IsFIFO reports whether the queue named name is a FIFO queue: SQS
// requires the ".fifo" suffix on those and refuses it on the others.
func IsFIFO(name string) bool { return strings.HasSuffix(name, ".fifo") }
