package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"time"

	"go.yaml.in/yaml/v3"
)

// DefaultDLQNamePattern is the unanchored regular expression that marks a
// topic or queue as a DLQ by its name alone.
const DefaultDLQNamePattern = `(?i).*([._-]dlq|[._-]dlt|dead-?letters?|deadletter|[._]error|parking-?lot)$`

// DefaultKafkaCursorGroup is dlq.kafka_cursor_group when the file sets none:
// the consumer group whose commits mark how far each Kafka DLQ has been
// replayed. This is its only default; everything that reads or moves the
// cursor takes it from the config.
const DefaultKafkaCursorGroup = "queuewatch-dlq"

// DefaultHysteresisPolls is alerts.hysteresis_polls when the file sets
// none: a status is shown once two polls in a row judged it, so a single
// poll's excursion (a burst between two commits) never flips it, at the
// cost of one poll's delay; the rules' status alerts wait as long.
const DefaultHysteresisPolls = 2

// Kafka isolation levels for reading offsets.
const (
	IsolationReadUncommitted = "read_uncommitted"
	IsolationReadCommitted   = "read_committed"
)

// Auth modes.
const (
	AuthNone   = "none"
	AuthBasic  = "basic"
	AuthTokens = "tokens"
	AuthProxy  = "proxy"
	AuthOIDC   = "oidc"
)

// Role is what an authenticated user may do.
type Role string

// Roles, from least to most privileged.
const (
	RoleViewer   Role = "viewer"
	RoleOperator Role = "operator"
	RoleAdmin    Role = "admin"
)

// defaultPollTimeout caps the default poll_timeout, which is otherwise
// poll_interval.
const defaultPollTimeout = 10 * time.Second

// Config is the whole queuewatch configuration.
type Config struct {
	Listen       string        `yaml:"listen"`
	PollInterval time.Duration `yaml:"poll_interval"`
	// PollTimeout bounds one poll of one source. Zero means
	// min(PollInterval, 10s).
	PollTimeout time.Duration `yaml:"poll_timeout"`
	// History is how much poll history is kept in memory.
	History  time.Duration `yaml:"history"`
	DataDir  string        `yaml:"data_dir"`
	Log      Log           `yaml:"log"`
	Kafka    []Kafka       `yaml:"kafka"`
	RabbitMQ []RabbitMQ    `yaml:"rabbitmq"`
	NATS     []NATS        `yaml:"nats"`
	SQS      []SQS         `yaml:"sqs"`
	Kinesis  []Kinesis     `yaml:"kinesis"`
	PubSub   []PubSub      `yaml:"pubsub"`
	Outbox   []Outbox      `yaml:"outbox"`
	Metrics  Metrics       `yaml:"metrics"`
	DLQ      DLQ           `yaml:"dlq"`
	Alerts   Alerts        `yaml:"alerts"`
	Auth     Auth          `yaml:"auth"`
	Audit    Audit         `yaml:"audit"`
	// Masking hides configured values of dead letters; see MaskRule.
	Masking []MaskRule `yaml:"masking"`
	// MaskingKey keys the hash masking mode.
	MaskingKey string `yaml:"masking_key"`
	// Shard splits the clusters across replicas; see Shard.
	Shard Shard `yaml:"shard"`
	// GrafanaURL is the address of the Grafana that holds queuewatch's
	// dashboards (grafana/dashboards); when set, every reader and DLQ page
	// links to its dashboard with the variables that select it. Empty: no
	// links.
	GrafanaURL string `yaml:"grafana_url"`

	// file is where the config came from, for errors reported after Parse.
	file string
}

// Log configures the process logger.
type Log struct {
	Level  string `yaml:"level"`  // debug|info|warn|error
	Format string `yaml:"format"` // text|json
}

// Kafka is one Kafka cluster to watch.
type Kafka struct {
	Name    string   `yaml:"name"`
	Brokers []string `yaml:"brokers"`
	// ClientID is sent to the brokers; empty means "queuewatch".
	ClientID string `yaml:"client_id"`
	// SASL is nil when the cluster needs no SASL authentication.
	SASL   *SASL  `yaml:"sasl"`
	TLS    TLS    `yaml:"tls"`
	Groups Filter `yaml:"groups"`
	// DLQTopics are anchored regexes naming topics that are DLQs whatever
	// their names.
	DLQTopics []string `yaml:"dlq_topics"`
	// Isolation is read_uncommitted or read_committed; empty means
	// read_uncommitted.
	Isolation string `yaml:"isolation"`
	// SchemaRegistry, when set, decodes keys and values in the Confluent
	// wire format (Avro, Protobuf, JSON Schema) for display.
	SchemaRegistry *SchemaRegistry `yaml:"schema_registry"`
	// Connect are the Kafka Connect clusters working on this cluster; each
	// connector is a reader, polled with the cluster.
	Connect []Connect `yaml:"connect"`

	dlqTopics []*regexp.Regexp
}

// SchemaRegistry is a Confluent-compatible schema registry (Confluent,
// Redpanda, Karapace, Apicurio's /apis/ccompat/v7).
type SchemaRegistry struct {
	URL      string `yaml:"url"`
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	TLS      TLS    `yaml:"tls"`
}

// SASL holds Kafka SASL credentials: a username and password for PLAIN
// and SCRAM, an OAuth 2.0 client for OAUTHBEARER, the AWS credential
// chain (and a role to assume) for AWS_MSK_IAM.
type SASL struct {
	Mechanism string `yaml:"mechanism"` // PLAIN|SCRAM-SHA-256|SCRAM-SHA-512|OAUTHBEARER|AWS_MSK_IAM
	Username  string `yaml:"username"`
	Password  string `yaml:"password"`
	// TokenURL is the identity provider's token endpoint, where
	// OAUTHBEARER gets its tokens with the client-credentials grant.
	TokenURL string `yaml:"token_url"`
	ClientID string `yaml:"client_id"`
	// ClientSecret or ClientSecretFile (read once at start, surrounding
	// white space trimmed) is the client's secret.
	ClientSecret     string `yaml:"client_secret"`
	ClientSecretFile string `yaml:"client_secret_file"`
	// Scope is the space-separated scopes to ask for; empty asks for none.
	Scope string `yaml:"scope"`
	// Audience, when set, is sent as the token request's audience
	// parameter (Auth0, Okta and others select the token's aud with it).
	Audience string `yaml:"audience"`
	// Region is where AWS_MSK_IAM's credentials are had (STS for
	// RoleARN, a profile's region otherwise); the signature's region is
	// the brokers' (from their MSK host names, else AWS_REGION).
	Region string `yaml:"region"`
	// RoleARN, when set, is assumed (STS AssumeRole) with the default
	// credential chain, as for SQS.
	RoleARN string `yaml:"role_arn"`
}

// Mechanisms are the SASL mechanisms queuewatch speaks to Kafka.
const (
	MechanismPlain       = "PLAIN"
	MechanismSCRAM256    = "SCRAM-SHA-256"
	MechanismSCRAM512    = "SCRAM-SHA-512"
	MechanismOAuthBearer = "OAUTHBEARER"
	MechanismMSKIAM      = "AWS_MSK_IAM"
)

// TLS configures a TLS client connection. Relative file paths are resolved
// against the config file's directory by Parse and Load.
type TLS struct {
	Enabled    bool   `yaml:"enabled"`
	CAFile     string `yaml:"ca_file"`
	CertFile   string `yaml:"cert_file"`
	KeyFile    string `yaml:"key_file"`
	ServerName string `yaml:"server_name"`
	// InsecureSkipVerify disables certificate verification; for test
	// clusters only.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
}

// RabbitMQ is one RabbitMQ cluster to watch.
type RabbitMQ struct {
	Name string `yaml:"name"`
	// URL is the AMQP URL (amqp:// or amqps://), credentials included.
	URL string `yaml:"url"`
	// ManagementURL is the management plugin's HTTP API (http:// or
	// https://); optional.
	ManagementURL string `yaml:"management_url"`
	// ManagementUsername and ManagementPassword default to the URL's
	// credentials; see ManagementCredentials.
	ManagementUsername string `yaml:"management_username"`
	ManagementPassword string `yaml:"management_password"`
	// PrometheusURL is the rabbitmq_prometheus plugin's endpoint, which
	// polls read depths and consumers from between management listings.
	// Empty means the management API's host on port 15692 (15691 for
	// https); "none" never reads the plugin.
	PrometheusURL string `yaml:"prometheus_url"`
	// ListEvery is how often a poll lists the queues through the
	// management API while the plugin serves depths: every ListEvery-th
	// poll (0: the collector's default, 5; 1: every poll). Rates and
	// policies are as fresh as the last listing.
	ListEvery int `yaml:"list_every"`
	TLS       TLS `yaml:"tls"`
	// VHosts limits the watched vhosts; empty means all.
	VHosts []string `yaml:"vhosts"`
	Queues Filter   `yaml:"queues"`
	// DLQQueues name queues that are DLQs whatever their names. An entry
	// is a queue name, matched exactly ("payments.failed"), unless it
	// starts with "re:": the rest is then an anchored regex
	// ("re:.*\.failed"). See DLQQueueNames and LegacyDLQPatterns.
	DLQQueues []string `yaml:"dlq_queues"`

	dlqQueues []*regexp.Regexp
}

// PrometheusNone as a RabbitMQ prometheus_url turns reading the
// rabbitmq_prometheus plugin off.
const PrometheusNone = "none"

// DLQ configures dead-letter-queue detection and replay.
type DLQ struct {
	// NamePattern is an unanchored regex; a topic or queue whose name
	// matches is a DLQ. Empty disables detection by name.
	NamePattern string `yaml:"name_pattern"`
	// KafkaCursorGroup is the consumer group whose commits record how far
	// each Kafka DLQ has been replayed.
	KafkaCursorGroup string `yaml:"kafka_cursor_group"`
	// MaxReplays is how many times one message may be replayed.
	MaxReplays int `yaml:"max_replays"`
	// ReplayRate is the default replay rate in messages per second.
	ReplayRate float64 `yaml:"replay_rate"`

	namePattern *regexp.Regexp
}

// Alerts holds the alert thresholds, shared by status evaluation and the
// generated Prometheus rules.
type Alerts struct {
	// Window is the number of polls in the status window.
	Window int `yaml:"window"`
	// HysteresisPolls is how many polls in a row must judge a reader's new
	// status before it is shown (and exported, and alerted on): one poll's
	// excursion does not flip it. 1 shows every poll's judgement; an error
	// is shown at once whatever it is.
	HysteresisPolls  int           `yaml:"hysteresis_polls"`
	LagHigh          int64         `yaml:"lag_high"`
	LagSecondsHigh   time.Duration `yaml:"lag_seconds_high"`
	DLQAgeHigh       time.Duration `yaml:"dlq_age_high"`
	DLQGrowingWindow time.Duration `yaml:"dlq_growing_window"`
	// BacklogHigh is the RabbitMQ ready-message threshold.
	BacklogHigh int64 `yaml:"backlog_high"`
	// StaleAfter is how long a collector may go without a successful poll.
	StaleAfter time.Duration `yaml:"stale_after"`
	// RetentionHeadroomLow is the retention headroom below which a reader
	// with a backlog is at least warn and QueuewatchDataLossImminent fires:
	// its oldest pending message is deleted by the broker within this long.
	RetentionHeadroomLow time.Duration `yaml:"retention_headroom_low"`
	// Overrides are tried in order; the first that matches wins.
	Overrides []Override `yaml:"overrides"`
	// Outbox holds the thresholds of the outbox alerts.
	Outbox OutboxAlerts `yaml:"outbox"`
}

// MaxRetentionHeadroomLow bounds alerts.retention_headroom_low: half the
// day beyond which queuewatch exports no headroom series.
const MaxRetentionHeadroomLow = 12 * time.Hour

// Override replaces some thresholds for matching consumer groups or DLQs.
// Group and DLQ are anchored regexes; at least one is set, and when both are
// set both must match. Zero thresholds keep the global value.
type Override struct {
	Group          string        `yaml:"group"`
	DLQ            string        `yaml:"dlq"`
	LagHigh        int64         `yaml:"lag_high"`
	LagSecondsHigh time.Duration `yaml:"lag_seconds_high"`
	DLQAgeHigh     time.Duration `yaml:"dlq_age_high"`

	group, dlq *regexp.Regexp
}

// Auth configures who may use the UI and API.
type Auth struct {
	Mode   string  `yaml:"mode"` // none|basic|tokens|proxy|oidc
	Users  []User  `yaml:"users"`
	Tokens []Token `yaml:"tokens"`
	Proxy  Proxy   `yaml:"proxy"`
	// Session is the session cookie of mode oidc.
	Session Session `yaml:"session"`
	// OIDC is the provider of mode oidc.
	OIDC OIDC `yaml:"oidc"`
	// UnmaskRole is the least role that may show one message's masked
	// values in clear (each such view is audited); admin by default.
	UnmaskRole Role `yaml:"unmask_role"`
}

// User is a basic-auth user.
type User struct {
	Name         string `yaml:"name"`
	PasswordHash string `yaml:"password_hash"` // bcrypt
	// Role is the user's role everywhere; Grants add scoped ones.
	Role   Role    `yaml:"role"`
	Grants []Grant `yaml:"grants"`
}

// Token is an API bearer token, stored as "sha256:<hex>" of the token.
type Token struct {
	Name      string `yaml:"name"`
	TokenHash string `yaml:"token_hash"`
	// Role is the token's role everywhere; Grants add scoped ones.
	Role   Role    `yaml:"role"`
	Grants []Grant `yaml:"grants"`
}

// Proxy configures authentication by a trusted reverse proxy.
type Proxy struct {
	// TrustedCIDRs are the proxy's addresses; a single IP is a host prefix.
	TrustedCIDRs []string `yaml:"trusted_cidrs"`
	UserHeader   string   `yaml:"user_header"`
	GroupsHeader string   `yaml:"groups_header"`
	// GroupRoles maps a proxy group to a grant: a role, or a role in a
	// scope. A user's groups' grants add up.
	GroupRoles  map[string]Grant `yaml:"group_roles"`
	DefaultRole Role             `yaml:"default_role"`

	trusted []netip.Prefix
}

// Default returns a configuration with every default set and no clusters.
func Default() *Config {
	return &Config{
		Listen:       "127.0.0.1:8080",
		PollInterval: 15 * time.Second,
		PollTimeout:  defaultPollTimeout,
		History:      time.Hour,
		DataDir:      "data",
		Log:          Log{Level: "info", Format: "text"},
		Metrics:      Metrics{Granularity: GranularityPartition},
		DLQ: DLQ{
			NamePattern:      DefaultDLQNamePattern,
			KafkaCursorGroup: DefaultKafkaCursorGroup,
			MaxReplays:       5,
			ReplayRate:       200,
		},
		Alerts: Alerts{
			Window:           10,
			HysteresisPolls:  DefaultHysteresisPolls,
			LagHigh:          10000,
			LagSecondsHigh:   5 * time.Minute,
			DLQAgeHigh:       time.Hour,
			DLQGrowingWindow: 15 * time.Minute,
			BacklogHigh:      10000,
			StaleAfter:       5 * time.Minute,
			Outbox:           defaultOutboxAlerts,
			// An hour is enough to page someone and scale out or move the
			// backlog aside, short enough to be rare on healthy readers.
			RetentionHeadroomLow: time.Hour,
		},
		Audit: Audit{Driver: AuditSQLite, LeaseTTL: DefaultAuditLeaseTTL, BodyReads: BodyReadsAuto},
		Auth: Auth{
			Mode:       AuthNone,
			UnmaskRole: RoleAdmin,
			Proxy: Proxy{
				UserHeader:   "X-Forwarded-User",
				GroupsHeader: "X-Forwarded-Groups",
				DefaultRole:  RoleViewer,
			},
		},
		Shard: Shard{Count: 1},
	}
}

// Load reads the file at path and parses it like Parse.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	return Parse(data, path)
}

// Parse parses YAML config data: it expands ${VAR} from the environment,
// decodes strictly, applies defaults, resolves relative TLS paths against
// filepath.Dir(filename) and validates. filename names the source in errors.
func Parse(data []byte, filename string) (*Config, error) {
	return parse(data, filename, os.LookupEnv)
}

func parse(data []byte, filename string, lookup func(string) (string, bool)) (*Config, error) {
	if filename == "" {
		filename = "config"
	}
	root, err := parseYAML(data, filename)
	if err != nil {
		return nil, err
	}
	c := Default()
	c.PollTimeout = 0 // derived from poll_interval unless set
	c.file = filename
	d := &decoder{file: filename, lookup: lookup, lines: map[string]int{}}
	if root != nil {
		if root.Kind != yaml.MappingNode {
			d.fail(root.Line, "", "expected a mapping of settings at the top level, got %s", describe(root))
		} else {
			d.structure(root, reflect.ValueOf(c).Elem(), "")
		}
	}
	errs := d.errs
	if err := c.applyShardEnv(lookup); err != nil {
		errs = append(errs, &Error{File: filename, Msg: err.Error()})
	}
	c.resolvePaths(filepath.Dir(filename))
	// Validation runs even when decoding failed, so that one run reports
	// every mistake; what it says of a key that did not decode (left at
	// its default) is the decoding's mistake again, and is left out.
	for _, e := range c.validate() {
		if d.moot(e.Path) {
			continue
		}
		e.File = filename
		e.Line = d.lineOf(e.Path)
		if e.Line == 0 && e.near != "" {
			e.Line = d.lineOf(e.near)
		}
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return c, nil
}

// parseYAML parses the single YAML document in data and returns its top
// node, or nil for an empty document.
func parseYAML(data []byte, filename string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(data, filename, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, syntaxError(data, filename, err)
		}
		return nil, &Error{File: filename, Line: extra.Line, Msg: "only one YAML document is allowed"}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.ShortTag() == "!!null" {
		return nil, nil
	}
	return top, nil
}

// resolvePaths makes relative TLS and secret file paths relative to dir.
func (c *Config) resolvePaths(dir string) {
	for i := range c.Kafka {
		c.Kafka[i].TLS.resolve(dir)
		if s := c.Kafka[i].SASL; s != nil {
			resolvePath(dir, &s.ClientSecretFile)
		}
		if r := c.Kafka[i].SchemaRegistry; r != nil {
			r.TLS.resolve(dir)
		}
		for j := range c.Kafka[i].Connect {
			c.Kafka[i].Connect[j].resolve(dir)
		}
	}
	for i := range c.RabbitMQ {
		c.RabbitMQ[i].TLS.resolve(dir)
	}
	for i := range c.PubSub {
		resolvePath(dir, &c.PubSub[i].CredentialsFile)
	}
}

func (t *TLS) resolve(dir string) {
	for _, p := range []*string{&t.CAFile, &t.CertFile, &t.KeyFile} {
		resolvePath(dir, p)
	}
}

// resolvePath makes a relative file path relative to dir.
func resolvePath(dir string, p *string) {
	if *p != "" && !filepath.IsAbs(*p) && dir != "." {
		*p = filepath.Join(dir, *p)
	}
}

// RequireSources returns an error when no cluster or outbox source is
// configured. Parse allows that (the demo builds its clusters in code); serve
// and check call this.
func (c *Config) RequireSources() error {
	if len(c.Kafka) == 0 && len(c.RabbitMQ) == 0 && len(c.NATS) == 0 && len(c.SQS) == 0 && len(c.PubSub) == 0 && len(c.Kinesis) == 0 && len(c.Outbox) == 0 {
		return &Error{File: c.file, Msg: "no sources configured: add at least one kafka, rabbitmq or nats cluster, sqs or kinesis account, pubsub project or outbox source"}
	}
	return nil
}

// SlogLevel is the configured level as a slog.Level; unknown levels, which
// Validate rejects, read as info.
func (l Log) SlogLevel() slog.Level {
	switch l.Level {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
