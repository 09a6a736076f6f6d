package rabbitmq

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// pageSize is the largest page the management API accepts.
const pageSize = 500

// maxPages bounds pagination against a server that keeps reporting more
// pages; 1,000 pages are 500,000 queues.
const maxPages = 1000

// requestTimeout bounds one management API request; listing 10,000 queues
// takes a few seconds a page on a busy broker.
const requestTimeout = 30 * time.Second

// queueColumns are the queue fields a listing reads; the rest of the
// object (backing queue status, garbage collection, rates) is never sent.
// The message_stats counters come from the same listing (columns= takes
// dotted paths), so rates cost no request of their own.
const queueColumns = "name,vhost,node,type,policy,arguments,effective_policy_definition," +
	"messages_ready,messages_unacknowledged,consumers,head_message_timestamp,state," +
	"consumer_utilisation,message_stats.publish,message_stats.ack,message_stats.deliver_no_ack," +
	"message_stats.get_no_ack,message_stats.deliver_get"

const bindingColumns = "source,vhost,destination,destination_type,routing_key"

// ErrUnauthorized is wrapped by errors that come from the management API
// refusing the configured credentials (HTTP 401 or 403).
var ErrUnauthorized = errors.New("unauthorized")

// ErrNotFound is wrapped by a 404, such as a configured vhost or a queue
// that does not exist.
var ErrNotFound = errors.New("not found")

// StatusError is a management API answer with an unexpected HTTP status.
type StatusError struct {
	URL    string
	Code   int
	Reason string // the API's "reason", or the start of the body
}

// Error names the URL, the status and, for credential problems, the setting
// to check.
func (e *StatusError) Error() string {
	switch e.Code {
	case http.StatusUnauthorized:
		return fmt.Sprintf("management API %s: 401 unauthorized: check management_username/password", e.URL)
	case http.StatusForbidden:
		return fmt.Sprintf("management API %s: 403 forbidden: the management user needs the monitoring tag", e.URL)
	}
	return fmt.Sprintf("management API %s: %d %s: %s", e.URL, e.Code, strings.ToLower(http.StatusText(e.Code)), e.Reason)
}

// Is makes errors.Is(err, ErrUnauthorized) true for 401 and 403, and
// errors.Is(err, ErrNotFound) for 404.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.Code == http.StatusUnauthorized || e.Code == http.StatusForbidden
	case ErrNotFound:
		return e.Code == http.StatusNotFound
	}
	return false
}

// pageOutOfRange reports whether the API said a page is past the end, which
// happens when queues are deleted while a listing pages through them.
func (e *StatusError) pageOutOfRange() bool {
	return e.Code == http.StatusBadRequest && strings.Contains(e.Reason, "page_out_of_range")
}

// Client talks to the management API of one cluster. It is safe for
// concurrent use.
type Client struct {
	base       string // without credentials or trailing slash, e.g. http://host:15672
	user, pass string
	hc         *http.Client
	requests   atomic.Int64
	counts     sync.Map // vhost → queues at its last listing

	// UnpagedMax overrides the package's UnpagedMax when not 0 (tests).
	UnpagedMax int

	verMu     sync.Mutex
	version   string // rabbitmq_version, "" until known
	versionAt time.Time
}

// NewClient returns a client for the API at base (http:// or https://).
// user and pass default to the credentials in base. tlsCfg (nil for the
// system roots) is used for https://.
func NewClient(base, user, pass string, tlsCfg *tls.Config) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("management url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("management url: scheme must be http or https, got %q", u.Scheme)
	}
	if u.User != nil && user == "" {
		user = u.User.Username()
		pass, _ = u.User.Password()
	}
	u.User = nil
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg
	return &Client{
		base: strings.TrimSuffix(u.String(), "/"),
		user: user,
		pass: pass,
		hc:   &http.Client{Transport: tr, Timeout: requestTimeout},
	}, nil
}

// Requests is how many requests the client sent.
func (m *Client) Requests() int64 { return m.requests.Load() }

// APIPath joins path segments under /api, escaping each one: a vhost named
// "/" becomes %2F and a queue "a b%" becomes a%20b%25.
func APIPath(segments ...string) string {
	var b strings.Builder
	b.WriteString("/api")
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// Get fetches path (already escaped, see APIPath) with query and decodes
// the JSON answer into out. A status other than 200 is a *StatusError.
func (m *Client) Get(ctx context.Context, path string, query url.Values, out any) error {
	return m.getStream(ctx, path, query, func(d *json.Decoder) error { return d.Decode(out) })
}

// getStream fetches path with query and hands the body to decode as it
// arrives, so a listing of 10,000 queues is never held as one byte slice.
// Error bodies are read (bounded) for their reason.
func (m *Client) getStream(ctx context.Context, path string, query url.Values, decode func(*json.Decoder) error) error {
	target := m.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	shown := m.base + path // never the credentials, which travel in a header
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("management API %s: %w", shown, err)
	}
	req.SetBasicAuth(m.user, m.pass)
	req.Header.Set("Accept", "application/json")
	m.requests.Add(1)
	resp, err := m.hc.Do(req)
	if err != nil {
		return fmt.Errorf("management API %s: %w", shown, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if err != nil {
			return fmt.Errorf("management API %s: read body: %w", shown, err)
		}
		return &StatusError{URL: shown, Code: resp.StatusCode, Reason: errorReason(body)}
	}
	if err := decode(json.NewDecoder(resp.Body)); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			err = errors.New("unexpected end of JSON input")
		}
		return fmt.Errorf("management API %s: decode: %w", shown, err)
	}
	return nil
}

// errorReason extracts "error: reason" from an API error body, or the start
// of a body that is not the API's JSON.
func errorReason(body []byte) string {
	var e struct{ Error, Reason string }
	if json.Unmarshal(body, &e) == nil && (e.Error != "" || e.Reason != "") {
		return strings.TrimPrefix(e.Error+": "+e.Reason, ": ")
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// Object decodes a JSON object, and also the empty list and null that
// some RabbitMQ versions send for an empty arguments table or policy.
type Object map[string]any

// UnmarshalJSON accepts an object, [] or null.
func (o *Object) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) || bytes.Equal(b, []byte("[]")) {
		*o = nil
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*o = m
	return nil
}

// Queue is a queue as the management API shows it. Counters are pointers
// because a queue created moments ago has no statistics yet.
type Queue struct {
	Name  string `json:"name"`
	VHost string `json:"vhost"`
	// Node runs the queue's process (a quorum queue's leader): the only
	// node whose rabbitmq_prometheus shows the queue.
	Node            string   `json:"node"`
	Type            string   `json:"type"`
	Policy          string   `json:"policy"`
	State           string   `json:"state"`
	Arguments       Object   `json:"arguments"`
	EffectivePolicy Object   `json:"effective_policy_definition"`
	Ready           *int64   `json:"messages_ready"`
	Unacked         *int64   `json:"messages_unacknowledged"`
	Consumers       *int     `json:"consumers"`
	HeadTimestamp   *float64 `json:"head_message_timestamp"`
	// Utilisation is consumer_utilisation, absent without consumers.
	Utilisation *float64 `json:"consumer_utilisation"`
	// Stats is message_stats: lifetime counters, absent on a queue that
	// has had no traffic yet or when the broker collects no statistics.
	Stats *MessageStats `json:"message_stats"`
	// ConsumerDetails is sent for a single queue (Client.Queue), not in
	// listings.
	ConsumerDetails []Consumer `json:"consumer_details"`
	// BrokerVersion is the broker's version as the client knew it when it
	// read the queue ("" when unknown); the delivery limit depends on it.
	BrokerVersion string `json:"-"`
}

// MessageStats are the counters of a queue's message_stats that polls
// read; a counter the broker has not started yet is 0.
type MessageStats struct {
	Publish      int64 `json:"publish"`
	Ack          int64 `json:"ack"`
	DeliverNoAck int64 `json:"deliver_no_ack"`
	GetNoAck     int64 `json:"get_no_ack"`
	DeliverGet   int64 `json:"deliver_get"`
}

// Consumer is one consumer of a queue.
type Consumer struct {
	Tag string `json:"consumer_tag"`
}

// DeliveryLimit is the delivery limit the broker enforces on the queue,
// RabbitMQ 4's default for quorum queues included; see
// EffectiveDeliveryLimit.
func (q Queue) DeliveryLimit() (int64, bool) {
	return EffectiveDeliveryLimit(q.BrokerVersion, q.Type, q.Arguments, q.EffectivePolicy)
}

type queuePage struct {
	Items     []Queue `json:"items"`
	Page      int     `json:"page"`
	PageCount int     `json:"page_count"`
}

// Exchange is one item of /api/exchanges.
type Exchange struct {
	Name      string `json:"name"`
	VHost     string `json:"vhost"`
	Type      string `json:"type"`
	Arguments Object `json:"arguments"`
}

// Binding is one item of /api/bindings.
type Binding struct {
	Source          string `json:"source"`
	VHost           string `json:"vhost"`
	Destination     string `json:"destination"`
	DestinationType string `json:"destination_type"`
	RoutingKey      string `json:"routing_key"`
}

// Queues lists the queues of vhost with the fields a poll reads. A vhost
// whose size is known from the last listing and at most UnpagedMax is read
// in one request, streamed; others page by page. RabbitMQ 3.10 builds the
// vhost's whole list for every page, so 20 pages of a 10,000-queue vhost
// cost the node about 3.5 times one unpaged listing (docs/performance.md).
func (m *Client) Queues(ctx context.Context, vhost string) ([]Queue, error) {
	var out []Queue
	var err error
	if n, ok := m.lastCount(vhost); ok && n <= m.unpagedMax() {
		out, err = m.queuesUnpaged(ctx, vhost, n)
	} else {
		out, err = m.queuesPaged(ctx, vhost)
	}
	switch {
	case err == nil:
		m.counts.Store(vhost, len(out))
	case errors.Is(err, ErrNotFound): // a deleted vhost is forgotten
		m.counts.Delete(vhost)
	}
	return out, err
}

// UnpagedMax is the largest vhost, in queues, read in one request; above
// it pages keep each request within the request timeout (10,000 queues
// take 2 to 3 s in one request on RabbitMQ 3.10).
const UnpagedMax = 50_000

func (m *Client) unpagedMax() int {
	if m.UnpagedMax != 0 {
		return m.UnpagedMax
	}
	return UnpagedMax
}

// lastCount is the vhost's queue count at its last listing. The first
// listing of a vhost pages: its size is not known yet.
func (m *Client) lastCount(vhost string) (int, bool) {
	v, ok := m.counts.Load(vhost)
	if !ok {
		return 0, false
	}
	return v.(int), true
}

// queuesUnpaged reads the vhost's JSON array one queue at a time; a queue
// listed twice is kept once, as with pages.
func (m *Client) queuesUnpaged(ctx context.Context, vhost string, hint int) ([]Queue, error) {
	out := make([]Queue, 0, hint)
	seen := make(map[[2]string]bool, hint)
	version := m.knownVersion()
	err := m.getStream(ctx, APIPath("queues", vhost), url.Values{"columns": {queueColumns}}, func(d *json.Decoder) error {
		return decodeQueues(d, func(q Queue) {
			k := [2]string{q.VHost, q.Name}
			if !seen[k] {
				seen[k] = true
				q.BrokerVersion = version
				out = append(out, q)
			}
		})
	})
	return out, err
}

// decodeQueues hands each queue of a JSON array to add as soon as it is
// decoded, reading the body no further ahead than the decoder's buffer.
func decodeQueues(d *json.Decoder, add func(Queue)) error {
	if t, err := d.Token(); err != nil {
		return err
	} else if t != json.Delim('[') {
		return fmt.Errorf("want a JSON array of queues, got %v", t)
	}
	for d.More() {
		var q Queue
		if err := d.Decode(&q); err != nil {
			return err
		}
		add(q)
	}
	_, err := d.Token() // the closing ]
	return err
}

// queuesPaged lists the vhost page by page. A queue seen on two pages (the
// list shifted under deletes and creates) is kept once.
func (m *Client) queuesPaged(ctx context.Context, vhost string) ([]Queue, error) {
	path := APIPath("queues", vhost)
	var out []Queue
	seen := map[[2]string]bool{}
	for page := 1; page <= maxPages; page++ {
		q := url.Values{
			"page":      {strconv.Itoa(page)},
			"page_size": {strconv.Itoa(pageSize)},
			"columns":   {queueColumns},
		}
		var p queuePage
		err := m.Get(ctx, path, q, &p)
		var se *StatusError
		if page > 1 && errors.As(err, &se) && se.pageOutOfRange() {
			break
		}
		if err != nil {
			return nil, err
		}
		for _, it := range p.Items {
			k := [2]string{it.VHost, it.Name}
			it.BrokerVersion = m.knownVersion()
			if !seen[k] {
				seen[k] = true
				out = append(out, it)
			}
		}
		if page >= p.PageCount {
			break
		}
	}
	return out, nil
}

// Queue reads one queue, consumers included. The broker's version is read
// first when the client does not know it yet, so that the queue's
// DeliveryLimit includes RabbitMQ 4's default.
func (m *Client) Queue(ctx context.Context, vhost, name string) (Queue, error) {
	version, _ := m.Version(ctx) // unknown is taken as 4.x by DeliveryLimit
	var q Queue
	err := m.Get(ctx, APIPath("queues", vhost, name), nil, &q)
	q.BrokerVersion = version
	return q, err
}

// Exchanges lists the exchanges of vhost, or of every vhost when vhost is "".
func (m *Client) Exchanges(ctx context.Context, vhost string) ([]Exchange, error) {
	path := APIPath("exchanges")
	if vhost != "" {
		path = APIPath("exchanges", vhost)
	}
	var out []Exchange
	err := m.Get(ctx, path, url.Values{"columns": {"name,vhost,type,arguments"}}, &out)
	return out, err
}

// Bindings lists the bindings of vhost, or of every vhost when vhost is "".
func (m *Client) Bindings(ctx context.Context, vhost string) ([]Binding, error) {
	path := APIPath("bindings")
	if vhost != "" {
		path = APIPath("bindings", vhost)
	}
	return m.bindings(ctx, path)
}

// ExchangeBindings lists the bindings whose source is exchange.
func (m *Client) ExchangeBindings(ctx context.Context, vhost, exchange string) ([]Binding, error) {
	return m.bindings(ctx, APIPath("exchanges", vhost, exchange, "bindings", "source"))
}

// QueueBindings lists the bindings whose destination is queue.
func (m *Client) QueueBindings(ctx context.Context, vhost, queue string) ([]Binding, error) {
	return m.bindings(ctx, APIPath("queues", vhost, queue, "bindings"))
}

func (m *Client) bindings(ctx context.Context, path string) ([]Binding, error) {
	var out []Binding
	err := m.Get(ctx, path, url.Values{"columns": {bindingColumns}}, &out)
	return out, err
}

// VHosts lists the names of all vhosts.
func (m *Client) VHosts(ctx context.Context) ([]string, error) {
	var out []struct{ Name string }
	if err := m.Get(ctx, APIPath("vhosts"), url.Values{"columns": {"name"}}, &out); err != nil {
		return nil, err
	}
	names := make([]string, len(out))
	for i, v := range out {
		names[i] = v.Name
	}
	return names, nil
}

// WhoAmI checks the credentials.
func (m *Client) WhoAmI(ctx context.Context) error {
	var out struct{ Name string }
	return m.Get(ctx, APIPath("whoami"), nil, &out)
}
