package config

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"time"
)

// DefaultPubSubPollInterval is pubsub[].poll_interval when the file sets
// none. The admin reads (topics, subscriptions) are free but share a
// quota of 6,000 a minute per project, and Cloud Monitoring's figures
// trail by minutes anyway: reading a project every minute loses nothing
// and leaves the quota to the project's own tools.
const DefaultPubSubPollInterval = time.Minute

// PubSub is one Google Cloud Pub/Sub project to watch, or the emulator
// (Endpoint, or PUBSUB_EMULATOR_HOST in the environment). Credentials are
// Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, the
// gcloud login, workload identity) unless CredentialsFile names a
// service account key; the emulator takes none.
type PubSub struct {
	Name    string `yaml:"name"`
	Project string `yaml:"project"`
	// Endpoint is the emulator's host:port; empty for Google Cloud.
	Endpoint string `yaml:"endpoint"`
	// CredentialsFile is a service account key (JSON) used instead of
	// Application Default Credentials.
	CredentialsFile string           `yaml:"credentials_file"`
	Subscriptions   Filter           `yaml:"subscriptions"`
	Monitoring      PubSubMonitoring `yaml:"monitoring"`
	// PollInterval is how often this project is read: at most as often as
	// the top-level poll_interval, which paces every source. Zero means
	// DefaultPubSubPollInterval.
	PollInterval time.Duration `yaml:"poll_interval"`
}

// PubSubMonitoring configures what is read from Cloud Monitoring, where
// alone Pub/Sub publishes a subscription's backlog and oldest age. Each
// read is a billed API call, so it is off by default.
type PubSubMonitoring struct {
	// Enabled reads the subscription metrics (one projects.timeSeries.list
	// call per metric per read of the project).
	Enabled bool `yaml:"enabled"`
	// Endpoint replaces https://monitoring.googleapis.com (a private
	// endpoint); empty for Google's.
	Endpoint string `yaml:"endpoint"`
}

// Interval is how often the project is read: PollInterval, or the default
// when unset.
func (s PubSub) Interval() time.Duration {
	if s.PollInterval > 0 {
		return s.PollInterval
	}
	return DefaultPubSubPollInterval
}

// pubsubProjectRE is a Google Cloud project id: 6 to 30 lower-case
// letters, digits and hyphens, starting with a letter, not ending with a
// hyphen; a domain-scoped project ("example.com:orders") has a prefix.
var pubsubProjectRE = regexp.MustCompile(`^([a-z0-9.-]+:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$`)

func (s *PubSub) validate(p *problems, path string) {
	checkName(p, path+".name", s.Name)
	switch {
	case s.Project == "":
		p.add(path+".project", "required (the Google Cloud project id, such as orders-prod)")
	case !pubsubProjectRE.MatchString(s.Project):
		p.add(path+".project", "%s is not a Google Cloud project id (6-30 lower-case letters, digits and hyphens, such as orders-prod)", quoteScalar(s.Project))
	}
	if s.Endpoint != "" {
		if _, _, err := net.SplitHostPort(s.Endpoint); err != nil {
			p.add(path+".endpoint", "%s is not host:port (the emulator's address, such as 127.0.0.1:8085)", quoteScalar(s.Endpoint))
		}
	}
	if e := s.Monitoring.Endpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.add(path+".monitoring.endpoint", "%s is not an http or https URL (such as https://monitoring.googleapis.com)", quoteScalar(e))
		}
	}
	switch {
	case s.Endpoint != "" && s.CredentialsFile != "":
		p.add(path+".credentials_file", "not used with endpoint: the emulator takes no credentials")
	case s.CredentialsFile != "":
		checkFile(p, path+".credentials_file", s.CredentialsFile)
	}
	s.Subscriptions.compile(p, path+".subscriptions")
	if s.PollInterval != 0 && s.PollInterval < time.Second {
		p.add(path+".poll_interval", "must be at least 1s, got %s", s.PollInterval)
	}
}

// checkStale refuses an interval that the stale-collector alert would
// report between two reads, as for SQS accounts (SQS.checkStale).
func (s *PubSub) checkStale(p *problems, path string, tick, staleAfter time.Duration) {
	every := max(s.Interval(), tick)
	if staleAfter <= 0 || every+tick < staleAfter {
		return
	}
	p.add(path+".poll_interval", "a project read every %s (polled every %s) reads as stale to alerts.stale_after (%s) between reads: read it more often or raise stale_after",
		every, tick, staleAfter)
	(*p)[len(*p)-1].near = path + ".name"
}

// pubsubPath names the i-th Pub/Sub project for errors.
func pubsubPath(i int) string { return fmt.Sprintf("pubsub[%d]", i) }
