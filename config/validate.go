package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"time"
)

// problems collects validation errors by key path; Parse adds file and line.
type problems []*Error

func (p *problems) add(path, format string, args ...any) {
	*p = append(*p, &Error{Path: path, Msg: fmt.Sprintf(format, args...)})
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// Validate checks c, fills the defaults whose zero value means "default"
// (poll_timeout, each Kafka cluster's client_id and isolation) and compiles
// every pattern. It returns every problem found, joined, one per line.
func (c *Config) Validate() error {
	if p := c.validate(); len(p) > 0 {
		return joinErrors(p)
	}
	return nil
}

func (c *Config) validate() problems {
	var p problems
	c.fillDefaults()
	c.validateTop(&p)
	c.Log.validate(&p)
	names := map[string]int{}
	for i := range c.Kafka {
		path := fmt.Sprintf("kafka[%d]", i)
		c.Kafka[i].validate(&p, path)
		checkUnique(&p, names, c.Kafka[i].Name, "kafka", i)
	}
	names = map[string]int{}
	for i := range c.RabbitMQ {
		path := fmt.Sprintf("rabbitmq[%d]", i)
		c.RabbitMQ[i].validate(&p, path)
		checkUnique(&p, names, c.RabbitMQ[i].Name, "rabbitmq", i)
	}
	names = map[string]int{}
	for i := range c.NATS {
		c.NATS[i].validate(&p, natsPath(i))
		checkUnique(&p, names, c.NATS[i].Name, "nats", i)
	}
	names = map[string]int{}
	for i := range c.SQS {
		c.SQS[i].validate(&p, sqsPath(i))
		c.SQS[i].checkStale(&p, sqsPath(i), c.PollInterval, c.Alerts.StaleAfter)
		checkUnique(&p, names, c.SQS[i].Name, "sqs", i)
	}
	names = map[string]int{}
	for i := range c.Kinesis {
		c.Kinesis[i].validate(&p, kinesisPath(i))
		c.Kinesis[i].checkStale(&p, kinesisPath(i), c.PollInterval, c.Alerts.StaleAfter)
		checkUnique(&p, names, c.Kinesis[i].Name, "kinesis", i)
	}
	names = map[string]int{}
	for i := range c.PubSub {
		c.PubSub[i].validate(&p, pubsubPath(i))
		c.PubSub[i].checkStale(&p, pubsubPath(i), c.PollInterval, c.Alerts.StaleAfter)
		checkUnique(&p, names, c.PubSub[i].Name, "pubsub", i)
	}
	names = map[string]int{}
	for i := range c.Outbox {
		c.Outbox[i].validate(&p, fmt.Sprintf("outbox[%d]", i))
		checkUnique(&p, names, c.Outbox[i].Name, "outbox", i)
	}
	c.Metrics.validate(&p)
	c.DLQ.validate(&p)
	c.Alerts.validate(&p)
	c.Auth.validate(&p)
	c.Audit.validate(&p)
	c.validateMasking(&p)
	c.Shard.validate(&p)
	return p
}

func (c *Config) fillDefaults() {
	if c.PollTimeout == 0 {
		c.PollTimeout = min(c.PollInterval, defaultPollTimeout)
	}
	for i := range c.Kafka {
		if c.Kafka[i].ClientID == "" {
			c.Kafka[i].ClientID = "queuewatch"
		}
		if c.Kafka[i].Isolation == "" {
			c.Kafka[i].Isolation = IsolationReadUncommitted
		}
	}
	for i := range c.NATS {
		c.NATS[i].fillDefaults()
	}
}

func (c *Config) validateTop(p *problems) {
	if c.Listen == "" {
		p.add("listen", "required (host:port, such as 127.0.0.1:8080)")
	} else if msg := checkHostPort(c.Listen, false, 0); msg != "" {
		p.add("listen", "%s", msg)
	}
	intervalOK := c.PollInterval >= time.Second
	if !intervalOK {
		p.add("poll_interval", "must be at least 1s, got %s", c.PollInterval)
	}
	switch {
	case c.PollTimeout <= 0:
		p.add("poll_timeout", "must be positive, got %s", c.PollTimeout)
	case intervalOK && c.PollTimeout > c.PollInterval:
		p.add("poll_timeout", "must not exceed poll_interval (%s), got %s", c.PollInterval, c.PollTimeout)
	}
	window := time.Duration(c.Alerts.Window) * c.PollInterval
	switch {
	case c.History <= 0:
		p.add("history", "must be positive, got %s", c.History)
	case intervalOK && c.Alerts.Window >= 3 && c.History < window:
		p.add("history", "must cover the alerts.window of %d polls (at least %s), got %s", c.Alerts.Window, window, c.History)
		(*p)[len(*p)-1].near = "poll_interval"
	}
	if c.DataDir == "" {
		p.add("data_dir", "required")
	}
	if c.GrafanaURL != "" {
		checkURL(p, "grafana_url", c.GrafanaURL, "http", "https")
	}
}

func (l Log) validate(p *problems) {
	switch l.Level {
	case "debug", "info", "warn", "error":
	default:
		p.add("log.level", "must be debug, info, warn or error, got %s", quoteScalar(l.Level))
	}
	switch l.Format {
	case "text", "json":
	default:
		p.add("log.format", "must be text or json, got %s", quoteScalar(l.Format))
	}
}

func checkName(p *problems, path, name string) {
	switch {
	case name == "":
		p.add(path, "required")
	case !nameRE.MatchString(name):
		p.add(path, "%s may contain only letters, digits, '.', '_' and '-'", quoteScalar(name))
	case name == "." || name == "..":
		// Browsers and HTTP clients collapse these as path segments, even
		// escaped, so no page of the cluster could be linked.
		p.add(path, "%s is not a usable name: it is a path segment", quoteScalar(name))
	}
}

func checkUnique(p *problems, seen map[string]int, name, section string, i int) {
	if name == "" {
		return
	}
	if first, dup := seen[name]; dup {
		p.add(fmt.Sprintf("%s[%d].name", section, i), "duplicate name %s (also %s[%d])", quoteScalar(name), section, first)
		return
	}
	seen[name] = i
}

// checkHostPort returns why s is not host:port, or "" when it is.
func checkHostPort(s string, needHost bool, minPort int) string {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return quoteScalar(s) + " is not host:port"
	}
	if needHost && host == "" {
		return quoteScalar(s) + " has no host"
	}
	if n, err := strconv.Atoi(port); err != nil || n < minPort || n > 65535 {
		return quoteScalar(s) + " has an invalid port"
	}
	return ""
}

func (k *Kafka) validate(p *problems, path string) {
	checkName(p, path+".name", k.Name)
	if len(k.Brokers) == 0 {
		p.add(path+".brokers", "at least one broker is required")
	}
	for i, b := range k.Brokers {
		if msg := checkHostPort(b, true, 1); msg != "" {
			p.add(fmt.Sprintf("%s.brokers[%d]", path, i), "%s", msg)
		}
	}
	if k.SASL != nil {
		k.SASL.validate(p, path+".sasl")
	}
	k.TLS.validate(p, path+".tls")
	k.Groups.compile(p, path+".groups")
	k.dlqTopics = compileList(p, path+".dlq_topics", k.DLQTopics)
	if r := k.SchemaRegistry; r != nil {
		checkURL(p, path+".schema_registry.url", r.URL, "http", "https")
		r.TLS.validate(p, path+".schema_registry.tls")
	}
	validateConnect(p, path+".connect", k.Connect)
	switch k.Isolation {
	case IsolationReadUncommitted, IsolationReadCommitted:
	default:
		p.add(path+".isolation", "must be read_uncommitted or read_committed, got %s", quoteScalar(k.Isolation))
	}
}

func (s *SASL) validate(p *problems, path string) {
	const want = "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or AWS_MSK_IAM"
	switch s.Mechanism {
	case MechanismPlain, MechanismSCRAM256, MechanismSCRAM512:
		s.validatePassword(p, path)
		s.validateUnused(p, path, s.awsFields(), "AWS_MSK_IAM")
	case MechanismOAuthBearer:
		s.validateOAuth(p, path)
		s.validateUnused(p, path, s.awsFields(), "AWS_MSK_IAM")
	case MechanismMSKIAM:
		s.validateMSK(p, path)
	case "":
		p.add(path+".mechanism", "required when sasl is set (%s)", want)
	default:
		p.add(path+".mechanism", "must be %s, got %s", want, quoteScalar(s.Mechanism))
	}
}

// validatePassword checks PLAIN and SCRAM credentials, which have no use
// for an OAuth client.
func (s *SASL) validatePassword(p *problems, path string) {
	if s.Username == "" {
		p.add(path+".username", "required when sasl is set")
	}
	if s.Password == "" {
		p.add(path+".password", "required when sasl is set")
	}
	s.validateUnused(p, path, s.oauthFields(), "OAUTHBEARER")
}

// validateUnused reports the fields of another mechanism that are set.
func (s *SASL) validateUnused(p *problems, path string, fields []saslField, mechanism string) {
	for _, f := range fields {
		if f.value != "" {
			p.add(path+"."+f.key, "only for mechanism %s, not %s", mechanism, s.Mechanism)
		}
	}
}

// validateMSK checks AWS_MSK_IAM, whose credentials come from the AWS
// chain: no password, no OAuth client, and a well-formed role.
func (s *SASL) validateMSK(p *problems, path string) {
	if s.Username != "" || s.Password != "" {
		p.add(path, "username and password are not used by AWS_MSK_IAM; it signs with the AWS credential chain (or role_arn)")
	}
	s.validateUnused(p, path, s.oauthFields(), "OAUTHBEARER")
	if s.Region != "" && !sqsRegionRE.MatchString(s.Region) {
		p.add(path+".region", "%s is not an AWS region (such as eu-west-1)", quoteScalar(s.Region))
	}
	if s.RoleARN != "" && !sqsRoleARNRE.MatchString(s.RoleARN) {
		p.add(path+".role_arn", "%s is not an IAM role ARN (arn:aws:iam::123456789012:role/name)", quoteScalar(s.RoleARN))
	}
}

// validateOAuth checks an OAUTHBEARER client: a token endpoint, a client
// id and exactly one of its secret and a file holding it.
func (s *SASL) validateOAuth(p *problems, path string) {
	if s.Username != "" || s.Password != "" {
		p.add(path, "username and password are not used by OAUTHBEARER; set client_id and client_secret")
	}
	switch u, err := url.Parse(s.TokenURL); {
	case s.TokenURL == "":
		p.add(path+".token_url", "required for OAUTHBEARER (the identity provider's token endpoint)")
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		p.add(path+".token_url", "must be an http or https URL, got %s", quoteScalar(s.TokenURL))
	}
	if s.ClientID == "" {
		p.add(path+".client_id", "required for OAUTHBEARER")
	}
	switch {
	case s.ClientSecret == "" && s.ClientSecretFile == "":
		p.add(path+".client_secret", "required for OAUTHBEARER (or client_secret_file)")
	case s.ClientSecret != "" && s.ClientSecretFile != "":
		p.add(path+".client_secret_file", "set client_secret or client_secret_file, not both")
	}
	checkFile(p, path+".client_secret_file", s.ClientSecretFile)
}

// saslField is a mechanism's key by its YAML name, and its value.
type saslField struct{ key, value string }

// oauthFields are the OAUTHBEARER keys, in the order their problems are
// listed.
func (s *SASL) oauthFields() []saslField {
	return []saslField{
		{"token_url", s.TokenURL},
		{"client_id", s.ClientID},
		{"client_secret", s.ClientSecret},
		{"client_secret_file", s.ClientSecretFile},
		{"scope", s.Scope},
		{"audience", s.Audience},
	}
}

// awsFields are the AWS_MSK_IAM keys.
func (s *SASL) awsFields() []saslField {
	return []saslField{{"region", s.Region}, {"role_arn", s.RoleARN}}
}

func (t *TLS) validate(p *problems, path string) {
	switch {
	case t.CertFile != "" && t.KeyFile == "":
		p.add(path+".key_file", "required when cert_file is set")
	case t.KeyFile != "" && t.CertFile == "":
		p.add(path+".cert_file", "required when key_file is set")
	}
	checkFile(p, path+".ca_file", t.CAFile)
	checkFile(p, path+".cert_file", t.CertFile)
	checkFile(p, path+".key_file", t.KeyFile)
}

// checkFile reports a set file path that cannot be used.
func checkFile(p *problems, path, file string) {
	if file == "" {
		return
	}
	st, err := os.Stat(file)
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.add(path, "file %s does not exist", quoteScalar(file))
	case errors.As(err, &pe):
		p.add(path, "cannot access %s: %v", quoteScalar(file), pe.Err)
	case err != nil:
		p.add(path, "cannot access %s: %v", quoteScalar(file), err)
	case st.IsDir():
		p.add(path, "%s is a directory, not a file", quoteScalar(file))
	}
}

func (r *RabbitMQ) validate(p *problems, path string) {
	checkName(p, path+".name", r.Name)
	if r.URL == "" {
		p.add(path+".url", "required (amqp://user:password@host:5672/)")
	} else {
		checkURL(p, path+".url", r.URL, "amqp", "amqps")
	}
	if r.ManagementURL != "" {
		checkURL(p, path+".management_url", r.ManagementURL, "http", "https")
	}
	if r.PrometheusURL != "" && r.PrometheusURL != PrometheusNone {
		checkURL(p, path+".prometheus_url", r.PrometheusURL, "http", "https")
	}
	if r.ListEvery < 0 {
		p.add(path+".list_every", "must not be negative, got %d", r.ListEvery)
	}
	r.TLS.validate(p, path+".tls")
	for i, vh := range r.VHosts {
		if vh == "" {
			p.add(fmt.Sprintf("%s.vhosts[%d]", path, i), "empty vhost name (the default vhost is \"/\")")
		}
	}
	r.Queues.compile(p, path+".queues")
	r.dlqQueues = compileDLQQueues(p, path+".dlq_queues", r.DLQQueues)
}

// checkURL checks raw has one of two schemes and a host. Messages never
// repeat the URL, which may hold a password.
func checkURL(p *problems, path, raw, scheme, secure string) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		p.add(path, "invalid URL: %v", err)
		return
	}
	if u.Scheme != scheme && u.Scheme != secure {
		p.add(path, "scheme must be %s or %s, got %s", scheme, secure, quoteScalar(u.Scheme))
		return
	}
	if u.Host == "" {
		p.add(path, "URL has no host")
	}
}

// ManagementCredentials returns the management API user and password,
// defaulting each to the one in the AMQP URL.
func (r RabbitMQ) ManagementCredentials() (user, password string) {
	user, password = r.ManagementUsername, r.ManagementPassword
	u, err := url.Parse(r.URL)
	if err != nil || u.User == nil {
		return user, password
	}
	if user == "" {
		user = u.User.Username()
	}
	if password == "" {
		password, _ = u.User.Password()
	}
	return user, password
}

// WatchesVHost reports whether vhost is watched: VHosts is empty or lists it.
func (r RabbitMQ) WatchesVHost(vhost string) bool {
	if len(r.VHosts) == 0 {
		return true
	}
	for _, v := range r.VHosts {
		if v == vhost {
			return true
		}
	}
	return false
}

func (d *DLQ) validate(p *problems) {
	d.namePattern = nil
	if d.NamePattern != "" {
		re, err := compileRegex(d.NamePattern)
		if err != nil {
			p.add("dlq.name_pattern", "%v", err)
		}
		d.namePattern = re
	}
	if d.KafkaCursorGroup == "" {
		p.add("dlq.kafka_cursor_group", "required")
	}
	if d.MaxReplays < 1 {
		p.add("dlq.max_replays", "must be at least 1, got %d", d.MaxReplays)
	}
	if !(d.ReplayRate > 0) { // also rejects NaN
		p.add("dlq.replay_rate", "must be positive (messages per second), got %v", d.ReplayRate)
	}
}

func (a *Alerts) validate(p *problems) {
	if a.Window < 3 {
		p.add("alerts.window", "must be at least 3 polls, got %d", a.Window)
	}
	if a.HysteresisPolls < 1 || a.HysteresisPolls > max(a.Window, 3) {
		p.add("alerts.hysteresis_polls", "must be from 1 to alerts.window (%d) polls, got %d", a.Window, a.HysteresisPolls)
	}
	if a.LagHigh <= 0 {
		p.add("alerts.lag_high", "must be positive, got %d", a.LagHigh)
	}
	if a.BacklogHigh <= 0 {
		p.add("alerts.backlog_high", "must be positive, got %d", a.BacklogHigh)
	}
	for _, d := range []struct {
		key string
		val time.Duration
	}{
		{"lag_seconds_high", a.LagSecondsHigh},
		{"dlq_age_high", a.DLQAgeHigh},
		{"dlq_growing_window", a.DLQGrowingWindow},
		{"stale_after", a.StaleAfter},
		{"retention_headroom_low", a.RetentionHeadroomLow},
	} {
		if d.val <= 0 {
			p.add("alerts."+d.key, "must be positive, got %s", d.val)
		}
	}
	// The headroom series stops a day out (collectors.HeadroomHorizon);
	// past half of that an alert could not see a reader cross it in time.
	if a.RetentionHeadroomLow > MaxRetentionHeadroomLow {
		p.add("alerts.retention_headroom_low", "must be at most %s, got %s", MaxRetentionHeadroomLow, a.RetentionHeadroomLow)
	}
	for i := range a.Overrides {
		a.Overrides[i].validate(p, fmt.Sprintf("alerts.overrides[%d]", i))
	}
	a.Outbox.validate(p)
}

func (o *Override) validate(p *problems, path string) {
	if o.Group == "" && o.DLQ == "" {
		p.add(path, "set group or dlq (or both) to say what the override applies to")
	}
	o.group = compileOne(p, path+".group", o.Group)
	o.dlq = compileOne(p, path+".dlq", o.DLQ)
	if o.LagHigh < 0 {
		p.add(path+".lag_high", "must not be negative, got %d", o.LagHigh)
	}
	if o.LagSecondsHigh < 0 {
		p.add(path+".lag_seconds_high", "must not be negative, got %s", o.LagSecondsHigh)
	}
	if o.DLQAgeHigh < 0 {
		p.add(path+".dlq_age_high", "must not be negative, got %s", o.DLQAgeHigh)
	}
	if o.LagHigh == 0 && o.LagSecondsHigh == 0 && o.DLQAgeHigh == 0 {
		p.add(path, "sets no threshold (lag_high, lag_seconds_high or dlq_age_high)")
	}
}

func compileOne(p *problems, path, pat string) *regexp.Regexp {
	if pat == "" {
		return nil
	}
	re, err := compileAnchored(pat)
	if err != nil {
		p.add(path, "%v", err)
	}
	return re
}
