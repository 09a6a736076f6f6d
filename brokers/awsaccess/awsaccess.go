// Package awsaccess is the AWS credential chain and request counting that
// every AWS broker (SQS, Kinesis) shares, so an account's credentials are
// found the same way whichever service it is watched through.
//
// Config does no network I/O: the SDK resolves credentials on the first
// request, so a missing credential is that request's error, reported on
// the account's source.
package awsaccess

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/middleware"
)

// Config is the SDK configuration of an account: the default credential
// chain (the environment, the shared config and credentials files with
// AWS_PROFILE, web identity such as EKS IRSA, the container or instance
// role), region, and roleARN assumed with those credentials when set.
func Config(region, roleARN string) (aws.Config, error) {
	// LoadDefaultConfig reads files and the environment only; credentials
	// are fetched on the first request.
	cfg, err := awsconfig.LoadDefaultConfig(context.Background(), awsconfig.WithRegion(region))
	if err != nil {
		return aws.Config{}, fmt.Errorf("aws config: %w", err)
	}
	if roleARN != "" {
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), roleARN,
			func(o *stscreds.AssumeRoleOptions) { o.RoleSessionName = "queuewatch" }))
	}
	return cfg, nil
}

// RequestCounter counts the requests SDK clients send, per action. The
// zero value is ready.
type RequestCounter struct {
	mu sync.Mutex
	n  map[string]int64
}

// Install adds the counting step to an SDK client's middleware stack
// (append it to the client's APIOptions). It sits in the deserialize step,
// which runs once per attempt (the retry loop is in the finalize step
// before it), so retries count too, as AWS bills them.
func (r *RequestCounter) Install(stack *middleware.Stack) error {
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("queuewatch-count-requests",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			r.add(awsmiddleware.GetOperationName(ctx))
			return next.HandleDeserialize(ctx, in)
		}), middleware.After)
}

func (r *RequestCounter) add(action string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[string]int64{}
	}
	r.n[action]++
}

// Counts is how many requests were sent so far, per action.
func (r *RequestCounter) Counts() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.n)
}

// Actions are the actions in counts, sorted, for a stable output order.
func Actions(counts map[string]int64) []string {
	return slices.Sorted(maps.Keys(counts))
}
