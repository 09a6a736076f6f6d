package rabbitmq

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
)

// The rabbitmq_prometheus plugin's default ports (plain and TLS).
const (
	exporterPort    = "15692"
	exporterTLSPort = "15691"
)

// Depth is one queue as rabbitmq_prometheus's detailed families show it.
// Like the management API's figures, these are the queue's last emitted
// statistics (every collect_statistics_interval, 5 s by default).
type Depth struct {
	Ready, Unacked int64
	Consumers      int
}

// QueueKey names a queue within a cluster.
type QueueKey struct{ VHost, Name string }

// Depths is one scrape of the plugin's detailed queue families.
type Depths struct {
	// Node is the node that answered (rabbitmq_identity_info): the plugin
	// shows only the queues whose process runs on it.
	Node   string
	Queues map[QueueKey]Depth
}

// Exporter reads rabbitmq_prometheus's /metrics/detailed endpoint of one
// node. It is safe for concurrent use.
type Exporter struct {
	base     string // without trailing slash, e.g. http://host:15692
	hc       *http.Client
	requests atomic.Int64
}

// NewExporter returns a reader for the plugin at base (http:// or https://;
// tlsCfg, nil for the system roots, is used for https://).
func NewExporter(base string, tlsCfg *tls.Config) (*Exporter, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("prometheus url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("prometheus url: scheme must be http or https, got %q", u.Scheme)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg
	return &Exporter{base: strings.TrimSuffix(u.String(), "/"), hc: &http.Client{Transport: tr, Timeout: requestTimeout}}, nil
}

// ExporterURL is where rabbitmq_prometheus listens by default on the
// management API's host: port 15692, or 15691 for https.
func ExporterURL(management string) (string, error) {
	u, err := url.Parse(management)
	if err != nil {
		return "", fmt.Errorf("management url: %w", err)
	}
	port := exporterPort
	if u.Scheme == "https" {
		port = exporterTLSPort
	}
	return (&url.URL{Scheme: u.Scheme, Host: net.JoinHostPort(u.Hostname(), port)}).String(), nil
}

// URL is the plugin's base URL.
func (e *Exporter) URL() string { return e.base }

// Requests is how many scrapes the reader sent.
func (e *Exporter) Requests() int64 { return e.requests.Load() }

// detailedFamilies are the two families a poll needs: depths and
// consumers. The plugin's queue_metrics family (head timestamps, bytes)
// costs the node about three times as much (docs/performance.md).
var detailedFamilies = []string{"queue_coarse_metrics", "queue_consumer_count"}

// QueueDepths scrapes the node's detailed queue families for vhosts (every
// vhost when empty). The body is parsed as it arrives, so memory holds the
// queues' numbers, never the text.
func (e *Exporter) QueueDepths(ctx context.Context, vhosts []string) (*Depths, error) {
	q := url.Values{"family": detailedFamilies}
	if len(vhosts) > 0 {
		q["vhost"] = vhosts
	}
	target := e.base + "/metrics/detailed?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("rabbitmq_prometheus %s: %w", e.base, err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	e.requests.Add(1)
	resp, err := e.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("rabbitmq_prometheus %s: %w", e.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, &StatusError{URL: e.base + "/metrics/detailed", Code: resp.StatusCode, Reason: strings.TrimSpace(string(body))}
	}
	d, err := parseDetailed(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("rabbitmq_prometheus %s: %w", e.base, err)
	}
	return d, nil
}

// parseDetailed reads the text exposition line by line and keeps the
// samples of the queue families a poll needs.
func parseDetailed(r io.Reader) (*Depths, error) {
	d := &Depths{Queues: map[QueueKey]Depth{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20) // a queue name is at most 255 bytes
	identity := false
	for sc.Scan() {
		b := sc.Bytes()
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		// Only the lines kept become strings: the families' other
		// samples and the plugin's own are two fifths of the text.
		i := bytes.IndexAny(b, "{ ")
		if i < 0 {
			i = len(b)
		}
		set := depthSetters[string(b[:i])]
		if set == nil && string(b[:i]) != "rabbitmq_identity_info" {
			continue
		}
		line := string(b)
		rest := line[i:]
		var k QueueKey
		node := ""
		value, err := splitSample(rest, func(label, v string) {
			switch label {
			case "vhost":
				k.VHost = v
			case "queue":
				k.Name = v
			case "rabbitmq_node":
				node = v
			}
		})
		if err != nil {
			return nil, fmt.Errorf("sample %.80q: %w", line, err)
		}
		if set == nil {
			d.Node, identity = node, true
			continue
		}
		q := d.Queues[k]
		set(&q, value)
		d.Queues[k] = q
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !identity {
		// Every answer of the plugin carries it; without it the body was
		// cut short or is not the plugin's.
		return nil, errors.New("no rabbitmq_identity_info in the answer")
	}
	return d, nil
}

// depthSetters are the samples a poll keeps, by metric name.
var depthSetters = map[string]func(*Depth, int64){
	"rabbitmq_detailed_queue_messages_ready":   func(d *Depth, v int64) { d.Ready = v },
	"rabbitmq_detailed_queue_messages_unacked": func(d *Depth, v int64) { d.Unacked = v },
	"rabbitmq_detailed_queue_consumers":        func(d *Depth, v int64) { d.Consumers = int(v) },
}

// splitSample reads the labels and the value of a sample after its metric
// name, handing each label to label with its value unescaped, and returns
// the value as an integer (the families read are counts).
//
// Example: `{vhost="v",queue="a\"b"} 3` gives vhost=v, queue=a"b and 3.
func splitSample(rest string, label func(name, value string)) (int64, error) {
	if rest != "" && rest[0] == '{' {
		var err error
		if rest, err = parseLabels(rest[1:], label); err != nil {
			return 0, err
		}
	}
	f := strings.Fields(rest) // value, then an optional timestamp
	if len(f) == 0 {
		return 0, errors.New("no value")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0, err
	}
	return int64(v), nil
}

// parseLabels reads `k="v",...}`, handing each label to label, and returns
// what follows the closing brace. Values are unescaped (\\, \", \n).
func parseLabels(s string, label func(name, value string)) (string, error) {
	for {
		s = strings.TrimLeft(s, " ,")
		if s == "" {
			return "", errors.New("unterminated labels")
		}
		if s[0] == '}' {
			return s[1:], nil
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 || len(s) < eq+2 || s[eq+1] != '"' {
			return "", errors.New("malformed label")
		}
		key := strings.TrimSpace(s[:eq])
		end, value, err := labelValue(s[eq+2:])
		if err != nil {
			return "", err
		}
		label(key, value)
		s = end
	}
}

// labelValue reads a quoted label value up to its closing quote (already
// past the opening one) and returns what follows and the value unescaped.
func labelValue(s string) (string, string, error) {
	if j := strings.IndexAny(s, `"\`); j >= 0 && s[j] == '"' {
		return s[j+1:], s[:j], nil // the common case: nothing escaped
	}
	var b strings.Builder
	for j := 0; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '"':
			return s[j+1:], b.String(), nil
		case c == '\\' && j+1 < len(s):
			j++
			c = s[j]
			if c == 'n' {
				c = '\n'
			}
		}
		b.WriteByte(c)
	}
	return "", "", errors.New("unterminated label value")
}
