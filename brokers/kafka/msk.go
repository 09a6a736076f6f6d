package kafka

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/twmb/franz-go/pkg/sasl"
	awssasl "github.com/twmb/franz-go/pkg/sasl/aws"

	"github.com/queuewatch/queuewatch/config"
)

// mskExpiryWindow is how long before its credentials expire the cache
// fetches new ones. A signed AWS_MSK_IAM payload is checked by the broker
// when it arrives, so credentials must not expire between signing and
// checking; five minutes is also well inside the shortest session STS
// gives (15 minutes), so every connection of a session shares one fetch.
const mskExpiryWindow = 5 * time.Minute

// mskUserAgent is the user-agent of the signed payload, which MSK logs.
const mskUserAgent = "queuewatch"

// mskMechanism is AWS_MSK_IAM signing with the AWS credential chain the
// SQS source uses: the environment, shared config and credentials files
// (AWS_PROFILE), web identity, container and instance roles, and
// s.RoleARN assumed with them when set. Loading reads files and the
// environment only; credentials are fetched at the first connection.
func mskMechanism(s *config.SASL) (sasl.Mechanism, error) {
	opts := []func(*awsconfig.LoadOptions) error{}
	if s.Region != "" {
		opts = append(opts, awsconfig.WithRegion(s.Region))
	}
	cfg, err := awsconfig.LoadDefaultConfig(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("sasl AWS_MSK_IAM: aws config: %w", err)
	}
	provider := cfg.Credentials
	if s.RoleARN != "" {
		provider = stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), s.RoleARN,
			func(o *stscreds.AssumeRoleOptions) { o.RoleSessionName = "queuewatch" })
	}
	return mskSigner(provider), nil
}

// mskSigner signs each authentication with the provider's credentials,
// cached until mskExpiryWindow before they expire.
func mskSigner(provider aws.CredentialsProvider) sasl.Mechanism {
	cache := aws.NewCredentialsCache(provider, func(o *aws.CredentialsCacheOptions) { o.ExpiryWindow = mskExpiryWindow })
	return awssasl.ManagedStreamingIAM(func(ctx context.Context) (awssasl.Auth, error) {
		c, err := cache.Retrieve(ctx)
		if err != nil {
			return awssasl.Auth{}, fmt.Errorf("sasl AWS_MSK_IAM: aws credentials: %w", err)
		}
		return awssasl.Auth{
			AccessKey: c.AccessKeyID, SecretKey: c.SecretAccessKey, SessionToken: c.SessionToken,
			UserAgent: mskUserAgent,
		}, nil
	})
}
