// Package sqs is the one way queuewatch reaches Amazon SQS (or an
// SQS-compatible server such as ElasticMQ).
//
// app builds one Cluster per configured sqs section and hands the same value
// to that account's collector (and, later, to its replay backend), so all of
// them use the same region, endpoint and credentials: the AWS SDK's default
// chain, or a role assumed with it. Every request goes through one SDK
// client that counts its attempts per action, because AWS bills each
// request; the counts are exported as queuewatch_sqs_api_requests_total.
//
// The SQS facts are decided here once: how a RedrivePolicy names its
// dead-letter queue and delivery limit (maxReceiveCount arrives as a number
// from some servers and as a string from others), and how a queue's name is
// read from its ARN or URL.
//
// A queue's oldest message age is not in SQS's API. The Cluster keeps the
// oldest SentTimestamp the replay backend's receives (browses, jobs) saw
// per queue, for the collector, which must not receive, to estimate it;
// and, with cloudwatch.oldest_age on, it reads CloudWatch's
// ApproximateAgeOfOldestMessage through a second SDK client counted like
// the first.
//
// New does no network I/O: the SDK resolves credentials on the first
// request, so a missing credential or an unreachable endpoint is that
// request's error, reported on the account's source.
package sqs
