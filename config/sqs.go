package config

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// DefaultSQSPollInterval is sqs[].poll_interval when the file sets none.
// AWS bills every request: one read of N queues makes about N+1 of them
// (GetQueueAttributes per queue, ListQueues per 1,000 names), so at the
// global 15 s default 1,000 queues would cost about $69 a month. Every
// four minutes they cost about $4.32 (10,800 reads a month); the cost
// table in docs/sqs.md has the numbers. Four, not five: a source's last success is
// its last read, and the default alerts.stale_after (5m) must not call an
// account stale between two reads (see checkStale).
const DefaultSQSPollInterval = 4 * time.Minute

// SQS is one Amazon SQS account and region to watch (or an SQS-compatible
// server such as ElasticMQ or LocalStack, named by Endpoint). Credentials
// come from the AWS SDK's default chain: the environment, the shared
// config and credentials files (AWS_PROFILE), web identity (EKS IRSA) and
// the instance or task role.
type SQS struct {
	Name   string `yaml:"name"`
	Region string `yaml:"region"`
	// Endpoint replaces the region's SQS endpoint, for a local server;
	// empty for AWS.
	Endpoint string `yaml:"endpoint"`
	// RoleARN, when set, is assumed (STS AssumeRole) with the default
	// chain's credentials.
	RoleARN    string        `yaml:"role_arn"`
	Queues     SQSQueues     `yaml:"queues"`
	CloudWatch SQSCloudWatch `yaml:"cloudwatch"`
	// PollInterval is how often this account is read: at most as often as
	// the top-level poll_interval, which paces every source. Zero means
	// DefaultSQSPollInterval.
	PollInterval time.Duration `yaml:"poll_interval"`
}

// SQSQueues selects the watched queues: ListQueues is asked for names
// starting with Prefix, and of those the ones Include and Exclude (anchored
// regexes on queue names, like every other filter) select are read.
type SQSQueues struct {
	Prefix  string   `yaml:"prefix"`
	Include []string `yaml:"include"`
	Exclude []string `yaml:"exclude"`

	filter Filter
}

// SQSCloudWatch configures what is read from CloudWatch, which SQS's own
// API does not say. Each metric is a paid GetMetricData query, so all are
// off by default.
type SQSCloudWatch struct {
	// OldestAge reads ApproximateAgeOfOldestMessage of every watched
	// queue on each read of the account: one GetMetricData call per 500
	// queues, billed per metric (queue) asked for.
	OldestAge bool `yaml:"oldest_age"`
}

// Match reports whether the queue named name is watched: it starts with
// Prefix, matches Include (when set) and matches no Exclude.
func (q SQSQueues) Match(name string) bool {
	if !strings.HasPrefix(name, q.Prefix) {
		return false
	}
	// Built in code without Validate, the patterns compile on use.
	return Filter{Include: q.Include, Exclude: q.Exclude, include: q.filter.include, exclude: q.filter.exclude}.Match(name)
}

// Interval is how often the account is read: PollInterval, or the default
// when unset.
func (s SQS) Interval() time.Duration {
	if s.PollInterval > 0 {
		return s.PollInterval
	}
	return DefaultSQSPollInterval
}

var (
	// sqsRegionRE is the shape of an AWS region (eu-west-1, us-gov-east-1,
	// ap-southeast-5); the SDK accepts anything and fails at the first
	// request with a DNS error, so a typo is caught here.
	sqsRegionRE = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
	// sqsRoleARNRE is an IAM role's ARN in any partition.
	sqsRoleARNRE = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$`)
	// sqsPrefixRE is what a queue name may hold: letters, digits, '-' and
	// '_' (and ".fifo" at the end).
	sqsPrefixRE = regexp.MustCompile(`^[A-Za-z0-9_.-]*$`)
)

func (s *SQS) validate(p *problems, path string) {
	checkName(p, path+".name", s.Name)
	switch {
	case s.Region == "":
		p.add(path+".region", "required (an AWS region such as eu-west-1; any for a local endpoint)")
	case !sqsRegionRE.MatchString(s.Region):
		p.add(path+".region", "%s is not an AWS region (such as eu-west-1)", quoteScalar(s.Region))
	}
	if s.Endpoint != "" {
		u, err := url.Parse(s.Endpoint)
		switch {
		case err != nil:
			p.add(path+".endpoint", "%s is not a URL (want http://host:port or https://host)", quoteScalar(s.Endpoint))
		case u.Scheme != "http" && u.Scheme != "https":
			p.add(path+".endpoint", "scheme must be http or https, got %s", quoteScalar(u.Scheme))
		case u.Host == "":
			p.add(path+".endpoint", "URL has no host")
		}
	}
	if s.RoleARN != "" && !sqsRoleARNRE.MatchString(s.RoleARN) {
		p.add(path+".role_arn", "%s is not an IAM role ARN (arn:aws:iam::123456789012:role/name)", quoteScalar(s.RoleARN))
	}
	if !sqsPrefixRE.MatchString(s.Queues.Prefix) {
		p.add(path+".queues.prefix", "%s cannot start a queue name (letters, digits, '-' and '_')", quoteScalar(s.Queues.Prefix))
	}
	s.Queues.filter = Filter{Include: s.Queues.Include, Exclude: s.Queues.Exclude}
	s.Queues.filter.compile(p, path+".queues")
	if s.PollInterval != 0 && s.PollInterval < time.Second {
		p.add(path+".poll_interval", "must be at least 1s, got %s", s.PollInterval)
	}
}

// checkStale refuses an interval that the stale-collector alert would
// report between two reads: the last success is the last read, and the
// next one comes up to about one tick (the top-level poll_interval) after
// the interval.
func (s *SQS) checkStale(p *problems, path string, tick, staleAfter time.Duration) {
	every := max(s.Interval(), tick)
	if staleAfter <= 0 || every+tick < staleAfter {
		return
	}
	p.add(path+".poll_interval", "an account read every %s (polled every %s) reads as stale to alerts.stale_after (%s) between reads: read it more often or raise stale_after",
		every, tick, staleAfter)
	(*p)[len(*p)-1].near = path + ".name"
}

// sqsPath names the i-th SQS account for errors.
func sqsPath(i int) string { return fmt.Sprintf("sqs[%d]", i) }
