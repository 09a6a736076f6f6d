package config

import (
	"fmt"
	"net/url"
	"strings"
)

// DefaultNATSDeadLetterStream is nats[].dead_letters.stream when the file sets
// none: the stream that keeps captured copies of dead-lettered messages.
const DefaultNATSDeadLetterStream = "QW_DEAD_LETTERS"

// NATS is one NATS JetStream server or cluster to watch (one account: the
// one its credentials log in to).
type NATS struct {
	Name string `yaml:"name"`
	// URL is one nats:// (or tls://) URL, or several separated by commas.
	URL string `yaml:"url"`
	// Credentials: at most one of CredsFile, NKeyFile, Token and
	// User+Password.
	CredsFile string `yaml:"creds_file"`
	NKeyFile  string `yaml:"nkey_file"`
	Token     string `yaml:"token"`
	User      string `yaml:"user"`
	Password  string `yaml:"password"`
	TLS       TLS    `yaml:"tls"`
	// Streams selects the watched streams by anchored regexes.
	Streams     Filter          `yaml:"streams"`
	DeadLetters NATSDeadLetters `yaml:"dead_letters"`
}

// NATSDeadLetters configures capturing JetStream dead letters: JetStream keeps
// none of its own, it only publishes an advisory when a consumer gives up on
// a message (max_deliver reached, or AckTerm).
type NATSDeadLetters struct {
	// Capture makes queuewatch create a stream over the advisory subjects
	// and copy each dead-lettered message into Stream. Off by default
	// because it creates streams on the server.
	Capture bool `yaml:"capture"`
	// Stream keeps the captured copies; empty means QW_DEAD_LETTERS.
	Stream string `yaml:"stream"`
}

// URLs returns the configured server URLs, trimmed.
func (n NATS) URLs() []string {
	var out []string
	for _, u := range strings.Split(n.URL, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

func (n *NATS) fillDefaults() {
	if n.DeadLetters.Stream == "" {
		n.DeadLetters.Stream = DefaultNATSDeadLetterStream
	}
}

func (n *NATS) validate(p *problems, path string) {
	checkName(p, path+".name", n.Name)
	urls := n.URLs()
	if len(urls) == 0 {
		p.add(path+".url", "required (nats://host:4222, several separated by commas)")
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		switch {
		case err != nil:
			p.add(path+".url", "invalid URL (the value is not repeated: it may hold a password)")
		case u.Scheme != "nats" && u.Scheme != "tls" && u.Scheme != "ws" && u.Scheme != "wss":
			p.add(path+".url", "scheme must be nats, tls, ws or wss, got %s", quoteScalar(u.Scheme))
		case u.Host == "":
			p.add(path+".url", "URL has no host")
		}
	}
	set := 0
	for _, s := range []bool{n.CredsFile != "", n.NKeyFile != "", n.Token != "", n.User != "" || n.Password != ""} {
		if s {
			set++
		}
	}
	if set > 1 {
		p.add(path, "set at most one of creds_file, nkey_file, token and user+password")
	}
	if (n.User == "") != (n.Password == "") {
		p.add(path+".password", "user and password go together")
	}
	checkFile(p, path+".creds_file", n.CredsFile)
	checkFile(p, path+".nkey_file", n.NKeyFile)
	n.TLS.validate(p, path+".tls")
	n.Streams.compile(p, path+".streams")
	if s := n.DeadLetters.Stream; strings.ContainsAny(s, " \t\r\n.*>") {
		p.add(path+".dead_letters.stream", "%s is not a valid stream name (no spaces, '.', '*' or '>')", quoteScalar(s))
	}
}

// natsPath names the i-th NATS cluster for errors.
func natsPath(i int) string { return fmt.Sprintf("nats[%d]", i) }
