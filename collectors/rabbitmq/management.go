package rabbitmq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
)

// pageSize is the largest page the management API accepts.
const pageSize = 500

// maxPages bounds pagination against a server that keeps reporting more
// pages; 1,000 pages are 500,000 queues.
const maxPages = 1000

// queueColumns are the queue fields a poll reads; the rest of the object
// (backing queue status, garbage collection, rates) is never sent.
const queueColumns = "name,vhost,type,policy,arguments,effective_policy_definition," +
	"messages_ready,messages_unacknowledged,consumers,head_message_timestamp,state"

// ErrUnauthorized is wrapped by errors that come from the management API
// refusing the configured credentials (HTTP 401 or 403).
var ErrUnauthorized = errors.New("unauthorized")

// errNotFound marks a 404, such as a configured vhost that does not exist.
var errNotFound = errors.New("not found")

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

// Is makes errors.Is(err, ErrUnauthorized) true for 401 and 403.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.Code == http.StatusUnauthorized || e.Code == http.StatusForbidden
	case errNotFound:
		return e.Code == http.StatusNotFound
	}
	return false
}

// pageOutOfRange reports whether the API said a page is past the end, which
// happens when queues are deleted while a poll pages through them.
func (e *StatusError) pageOutOfRange() bool {
	return e.Code == http.StatusBadRequest && strings.Contains(e.Reason, "page_out_of_range")
}

// mgmtClient talks to the management API.
type mgmtClient struct {
	base       string // without trailing slash, e.g. http://host:15672
	shownBase  string // base with any password redacted, for errors
	user, pass string
	hc         *http.Client
	requests   atomic.Int64
}

func newMgmtClient(base, user, pass string, hc *http.Client) (*mgmtClient, error) {
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
	shown := *u
	shown.User = nil
	u.User = nil
	return &mgmtClient{
		base:      strings.TrimSuffix(u.String(), "/"),
		shownBase: strings.TrimSuffix(shown.String(), "/"),
		user:      user,
		pass:      pass,
		hc:        hc,
	}, nil
}

// apiPath joins path segments under /api, escaping each one: a vhost named
// "/" becomes %2F and a queue "a b%" becomes a%20b%25.
func apiPath(segments ...string) string {
	var b strings.Builder
	b.WriteString("/api")
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// get fetches path (already escaped) with query and decodes the JSON answer
// into out.
func (m *mgmtClient) get(ctx context.Context, path string, query url.Values, out any) error {
	target := m.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	shown := m.shownBase + path
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
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("management API %s: read body: %w", shown, err)
	}
	if resp.StatusCode != http.StatusOK {
		return &StatusError{URL: shown, Code: resp.StatusCode, Reason: errorReason(body)}
	}
	if err := json.Unmarshal(body, out); err != nil {
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

// jsonObject decodes a JSON object, and also the empty list and null that
// some RabbitMQ versions send for an empty arguments table or policy.
type jsonObject map[string]any

// UnmarshalJSON accepts an object, [] or null.
func (o *jsonObject) UnmarshalJSON(b []byte) error {
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

// mgmtQueue is one item of /api/queues. Counters are pointers because a
// queue created moments ago has no statistics yet.
type mgmtQueue struct {
	Name            string     `json:"name"`
	VHost           string     `json:"vhost"`
	Type            string     `json:"type"`
	Policy          string     `json:"policy"`
	State           string     `json:"state"`
	Arguments       jsonObject `json:"arguments"`
	EffectivePolicy jsonObject `json:"effective_policy_definition"`
	Ready           *int64     `json:"messages_ready"`
	Unacked         *int64     `json:"messages_unacknowledged"`
	Consumers       *int       `json:"consumers"`
	HeadTimestamp   *float64   `json:"head_message_timestamp"`
}

type queuePage struct {
	Items     []mgmtQueue `json:"items"`
	Page      int         `json:"page"`
	PageCount int         `json:"page_count"`
}

// mgmtExchange is one item of /api/exchanges.
type mgmtExchange struct {
	Name      string     `json:"name"`
	VHost     string     `json:"vhost"`
	Type      string     `json:"type"`
	Arguments jsonObject `json:"arguments"`
}

// mgmtBinding is one item of /api/bindings.
type mgmtBinding struct {
	Source          string `json:"source"`
	VHost           string `json:"vhost"`
	Destination     string `json:"destination"`
	DestinationType string `json:"destination_type"`
	RoutingKey      string `json:"routing_key"`
}

// queues lists the queues of vhost page by page. A queue seen on two pages (the list shifted under deletes
// and creates) is kept once.
func (m *mgmtClient) queues(ctx context.Context, vhost string) ([]mgmtQueue, error) {
	path := apiPath("queues", vhost)
	var out []mgmtQueue
	seen := map[[2]string]bool{}
	for page := 1; page <= maxPages; page++ {
		q := url.Values{
			"page":      {strconv.Itoa(page)},
			"page_size": {strconv.Itoa(pageSize)},
			"columns":   {queueColumns},
		}
		var p queuePage
		err := m.get(ctx, path, q, &p)
		var se *StatusError
		if page > 1 && errors.As(err, &se) && se.pageOutOfRange() {
			break
		}
		if err != nil {
			return nil, err
		}
		for _, it := range p.Items {
			k := [2]string{it.VHost, it.Name}
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

// exchanges lists the exchanges of vhost, or of every vhost when vhost is "".
func (m *mgmtClient) exchanges(ctx context.Context, vhost string) ([]mgmtExchange, error) {
	path := apiPath("exchanges")
	if vhost != "" {
		path = apiPath("exchanges", vhost)
	}
	var out []mgmtExchange
	err := m.get(ctx, path, url.Values{"columns": {"name,vhost,type,arguments"}}, &out)
	return out, err
}

// bindings lists the bindings of vhost, or of every vhost when vhost is "".
func (m *mgmtClient) bindings(ctx context.Context, vhost string) ([]mgmtBinding, error) {
	path := apiPath("bindings")
	if vhost != "" {
		path = apiPath("bindings", vhost)
	}
	var out []mgmtBinding
	err := m.get(ctx, path, url.Values{"columns": {"source,vhost,destination,destination_type,routing_key"}}, &out)
	return out, err
}

// targetedBindings lists the bindings whose source is an exchange or whose
// destination is a queue.
func (m *mgmtClient) targetedBindings(ctx context.Context, r bindingRequest) ([]mgmtBinding, error) {
	path := apiPath("exchanges", r.vhost, r.name, "bindings", "source")
	if r.ofQueue {
		path = apiPath("queues", r.vhost, r.name, "bindings")
	}
	var out []mgmtBinding
	err := m.get(ctx, path, url.Values{"columns": {"source,vhost,destination,destination_type,routing_key"}}, &out)
	return out, err
}

// vhosts lists the names of all vhosts.
func (m *mgmtClient) vhosts(ctx context.Context) ([]string, error) {
	var out []struct{ Name string }
	if err := m.get(ctx, apiPath("vhosts"), url.Values{"columns": {"name"}}, &out); err != nil {
		return nil, err
	}
	names := make([]string, len(out))
	for i, v := range out {
		names[i] = v.Name
	}
	return names, nil
}

// whoami checks the credentials.
func (m *mgmtClient) whoami(ctx context.Context) error {
	var out struct{ Name string }
	return m.get(ctx, apiPath("whoami"), nil, &out)
}
