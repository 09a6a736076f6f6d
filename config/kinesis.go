package config

import (
	"fmt"
	"net/url"
	"regexp"
	"time"
)

// DefaultKinesisPollInterval is kinesis[].poll_interval when the file sets
// none. Reading an application's lag costs one GetShardIterator and one
// GetRecords per leased shard, each out of the shard's five reads a second
// that the application's own workers share; once a minute keeps that
// below one read in 300 (docs/kinesis.md has the numbers).
const DefaultKinesisPollInterval = time.Minute

// DefaultKinesisFailoverTime is kinesis[].applications[].failover_time
// when unset: the KCL's own default (failoverTimeMillis, 10 s), after
// which a lease not renewed may be taken by another worker.
const DefaultKinesisFailoverTime = 10 * time.Second

// Kinesis is one Amazon Kinesis Data Streams account and region to watch
// (or a local server named by Endpoint), and the Kinesis Client Library
// (KCL) applications consuming its streams. Credentials come from the AWS
// SDK's default chain, as for SQS.
type Kinesis struct {
	Name   string `yaml:"name"`
	Region string `yaml:"region"`
	// Endpoint replaces the region's Kinesis endpoint, for a local
	// server; empty for AWS.
	Endpoint string `yaml:"endpoint"`
	// DynamoDBEndpoint replaces the region's DynamoDB endpoint, where
	// the applications' lease tables are read; empty for AWS.
	DynamoDBEndpoint string `yaml:"dynamodb_endpoint"`
	// RoleARN, when set, is assumed (STS AssumeRole) with the default
	// chain's credentials.
	RoleARN string `yaml:"role_arn"`
	// Streams selects the streams shown (shards, retention, enhanced
	// fan-out consumers) by anchored regexes on their names.
	Streams Filter `yaml:"streams"`
	// Applications are the KCL applications whose lag is read from their
	// lease tables; each is a reader.
	Applications []KinesisApplication `yaml:"applications"`
	// PollInterval is how often this account is read: at most as often as
	// the top-level poll_interval. Zero means DefaultKinesisPollInterval.
	PollInterval time.Duration `yaml:"poll_interval"`
}

// KinesisApplication is one KCL application: its lease table in DynamoDB
// (the KCL's applicationName unless the application set another) and the
// stream it consumes. A multi-stream application (KCL 2.3+) names one of
// its streams per entry; its leases of other streams are not read.
type KinesisApplication struct {
	Name       string `yaml:"name"`
	LeaseTable string `yaml:"lease_table"`
	Stream     string `yaml:"stream"`
	// FailoverTime is the application's failoverTimeMillis: a lease
	// not renewed for this long is free to take, so an application none
	// of whose leases was renewed for longer has stopped. Zero means
	// DefaultKinesisFailoverTime.
	FailoverTime time.Duration `yaml:"failover_time"`
}

// Interval is how often the account is read: PollInterval, or the default
// when unset.
func (k Kinesis) Interval() time.Duration {
	if k.PollInterval > 0 {
		return k.PollInterval
	}
	return DefaultKinesisPollInterval
}

// Failover is the application's failover time, or the KCL default.
func (a KinesisApplication) Failover() time.Duration {
	if a.FailoverTime > 0 {
		return a.FailoverTime
	}
	return DefaultKinesisFailoverTime
}

var (
	// kinesisStreamRE is what a stream name may hold (1-128 characters).
	kinesisStreamRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	// dynamoTableRE is what a DynamoDB table name may hold (3-255).
	dynamoTableRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{3,255}$`)
)

func (k *Kinesis) validate(p *problems, path string) {
	checkName(p, path+".name", k.Name)
	switch {
	case k.Region == "":
		p.add(path+".region", "required (an AWS region such as eu-west-1; any for a local endpoint)")
	case !sqsRegionRE.MatchString(k.Region):
		p.add(path+".region", "%s is not an AWS region (such as eu-west-1)", quoteScalar(k.Region))
	}
	checkEndpoint(p, path+".endpoint", k.Endpoint)
	checkEndpoint(p, path+".dynamodb_endpoint", k.DynamoDBEndpoint)
	if k.RoleARN != "" && !sqsRoleARNRE.MatchString(k.RoleARN) {
		p.add(path+".role_arn", "%s is not an IAM role ARN (arn:aws:iam::123456789012:role/name)", quoteScalar(k.RoleARN))
	}
	k.Streams.compile(p, path+".streams")
	names := map[string]int{}
	for i := range k.Applications {
		k.Applications[i].validate(p, fmt.Sprintf("%s.applications[%d]", path, i))
		checkUnique(p, names, k.Applications[i].Name, path+".applications", i)
	}
	if k.PollInterval != 0 && k.PollInterval < time.Second {
		p.add(path+".poll_interval", "must be at least 1s, got %s", k.PollInterval)
	}
}

func (a *KinesisApplication) validate(p *problems, path string) {
	checkName(p, path+".name", a.Name)
	switch {
	case a.LeaseTable == "":
		p.add(path+".lease_table", "required (the KCL application's DynamoDB lease table, by default its application name)")
	case !dynamoTableRE.MatchString(a.LeaseTable):
		p.add(path+".lease_table", "%s is not a DynamoDB table name (3-255 letters, digits, '_', '-', '.')", quoteScalar(a.LeaseTable))
	}
	switch {
	case a.Stream == "":
		p.add(path+".stream", "required (the stream the application consumes)")
	case !kinesisStreamRE.MatchString(a.Stream):
		p.add(path+".stream", "%s is not a stream name (1-128 letters, digits, '_', '-', '.')", quoteScalar(a.Stream))
	}
	if a.FailoverTime != 0 && a.FailoverTime < time.Second {
		p.add(path+".failover_time", "must be at least 1s, got %s", a.FailoverTime)
	}
}

// checkStale refuses an interval that the stale-collector alert would
// report between two reads, as for SQS accounts (SQS.checkStale).
func (k *Kinesis) checkStale(p *problems, path string, tick, staleAfter time.Duration) {
	every := max(k.Interval(), tick)
	if staleAfter <= 0 || every+tick < staleAfter {
		return
	}
	p.add(path+".poll_interval", "an account read every %s (polled every %s) reads as stale to alerts.stale_after (%s) between reads: read it more often or raise stale_after",
		every, tick, staleAfter)
	(*p)[len(*p)-1].near = path + ".name"
}

// checkEndpoint checks an optional base URL replacing an AWS endpoint.
func checkEndpoint(p *problems, path, endpoint string) {
	if endpoint == "" {
		return
	}
	u, err := url.Parse(endpoint)
	switch {
	case err != nil:
		p.add(path, "%s is not a URL (want http://host:port or https://host)", quoteScalar(endpoint))
	case u.Scheme != "http" && u.Scheme != "https":
		p.add(path, "scheme must be http or https, got %s", quoteScalar(u.Scheme))
	case u.Host == "":
		p.add(path, "URL has no host")
	}
}

// kinesisPath names the i-th Kinesis account for errors.
func kinesisPath(i int) string { return fmt.Sprintf("kinesis[%d]", i) }
