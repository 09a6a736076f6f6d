package schemaregistry

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// Format names, as queue.Decoded.Format carries them.
const (
	FormatAvro       = "avro"
	FormatProtobuf   = "protobuf"
	FormatJSONSchema = "json-schema"
)

const (
	// requestTimeout bounds one registry request: a registry that does not
	// answer costs a browse this long once (see failTTL), not per message.
	requestTimeout = 5 * time.Second
	// failTTL is how long a failed schema id, or an unreachable registry,
	// is answered from memory before it is asked again.
	failTTL = 30 * time.Second
	// maxBody bounds a registry response; a schema is kilobytes.
	maxBody = 8 << 20
	// maxRefDepth and maxRefs bound the reference graph of one schema, a
	// guard against a registry answering a cycle.
	maxRefDepth = 16
	maxRefs     = 256
	// maxFailedEntries is the cache size past which expired failures are
	// swept out.
	maxFailedEntries = 1024
)

// ErrUnreachable is the cause of errors where the registry did not answer:
// the connection failed, timed out or got a 5xx.
var ErrUnreachable = errors.New("schema registry unreachable")

// ErrNotFound is the cause of errors where the registry answered 404: an
// unknown schema id, subject or version.
var ErrNotFound = errors.New("not found in the schema registry")

// Registry is a client of a Confluent-compatible schema registry that
// decodes wire-format bytes. It is safe for concurrent use.
type Registry struct {
	base     *url.URL
	user     string
	password string
	client   *http.Client
	now      func() time.Time
	// timeout bounds one request (requestTimeout; tests shorten it).
	timeout time.Duration

	mu      sync.Mutex
	schemas map[int]*entry
	// downUntil and downErr remember a registry that did not answer, so
	// that other schema ids fail at once until downUntil.
	downUntil time.Time
	downErr   error
}

// entry is one schema id's fetch: done is closed when s or err is set.
// A failed entry is dropped from the map after expires.
type entry struct {
	done    chan struct{}
	s       *schema
	err     error
	expires time.Time
}

// schema is a fetched and parsed schema, ready to decode with.
type schema struct {
	id     int
	format string
	// versions are the subjects and versions the registry lists for
	// the id, for display (several when subjects share the content).
	versions []queue.SchemaRef
	avro     *avroSchema
	proto    *protoSchema
}

// New returns a client of the Confluent-compatible registry at cfg.URL
// (for Apicurio, its /apis/ccompat/v7 path). Credentials in the URL's
// user info are used as basic auth when cfg.Username is empty; they never
// appear in an error.
func New(cfg config.SchemaRegistry) (*Registry, error) {
	u, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	if err != nil {
		// url.Parse's error quotes the URL, password included.
		return nil, errors.New("schema registry url: not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("schema registry url %s: want http:// or https:// and a host", redacted(u))
	}
	r := &Registry{
		user: cfg.Username, password: cfg.Password,
		now: time.Now, timeout: requestTimeout, schemas: map[int]*entry{},
	}
	if u.User != nil {
		if r.user == "" {
			r.user = u.User.Username()
			r.password, _ = u.User.Password()
		}
		u.User = nil
	}
	r.base = u
	tlsCfg, err := cfg.TLS.Config()
	if err != nil {
		return nil, fmt.Errorf("schema registry %s: %w", redacted(u), err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	if tlsCfg != nil {
		tr.TLSClientConfig = tlsCfg
	}
	// Each request's context carries the timeout (get).
	r.client = &http.Client{
		Transport: tr,
		// A registry has no business redirecting to another host with
		// our credentials; a redirect is shown as the error it is.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return r, nil
}

// redacted is u without its user info.
func redacted(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// Decode decodes b when it is in the Confluent wire format. ok is false
// when it is not (shorter than 5 bytes, or a first byte other than 0): the
// caller shows b as before. When ok, d names the schema id and has either
// Value, the decoded value as JSON, or Error, the reason it could not be
// decoded.
func (r *Registry) Decode(ctx context.Context, b []byte) (d queue.Decoded, ok bool) {
	return r.decode(ctx, b, "-value")
}

// DecodeKey is Decode for a record key: where subjects share the schema,
// the one named like a key subject (TopicNameStrategy's <topic>-key) is
// shown.
func (r *Registry) DecodeKey(ctx context.Context, b []byte) (d queue.Decoded, ok bool) {
	return r.decode(ctx, b, "-key")
}

func (r *Registry) decode(ctx context.Context, b []byte, suffix string) (d queue.Decoded, ok bool) {
	if len(b) < 5 || b[0] != 0 {
		return queue.Decoded{}, false
	}
	id := int(binary.BigEndian.Uint32(b[1:5]))
	d.Schema.ID = id
	s, err := r.schema(ctx, id)
	if err != nil {
		d.Error = err.Error()
		return d, true
	}
	d.Format = s.format
	if v := s.named(suffix); v != nil {
		d.Schema.Subject, d.Schema.Version = v.Subject, v.Version
	}
	v, err := s.decode(b[5:])
	if err != nil {
		d.Error = fmt.Sprintf("decode %s with schema %d: %v", s.format, id, err)
		return d, true
	}
	d.Value = v
	return d, true
}

// named returns the subject version ending in suffix, else the first
// the registry listed; nil when it listed none.
func (s *schema) named(suffix string) *queue.SchemaRef {
	for i := range s.versions {
		if strings.HasSuffix(s.versions[i].Subject, suffix) {
			return &s.versions[i]
		}
	}
	if len(s.versions) > 0 {
		return &s.versions[0]
	}
	return nil
}

func (s *schema) decode(payload []byte) (json.RawMessage, error) {
	switch s.format {
	case FormatAvro:
		return s.avro.decode(payload)
	case FormatProtobuf:
		return s.proto.decode(payload)
	default:
		return decodeJSON(payload)
	}
}

// schema returns schema id, fetching it once; callers asking at once
// share the fetch, and a failure is answered from memory for failTTL.
func (r *Registry) schema(ctx context.Context, id int) (*schema, error) {
	r.mu.Lock()
	e, found := r.schemas[id]
	if found && e.expires.IsZero() || found && r.now().Before(e.expires) {
		r.mu.Unlock()
		return e.wait(ctx, id)
	}
	if r.now().Before(r.downUntil) {
		err, until := r.downErr, r.downUntil
		r.mu.Unlock()
		return nil, fmt.Errorf("schema %d: not asked before %s, the registry did not answer: %w", id, until.Format(time.TimeOnly), err)
	}
	e = &entry{done: make(chan struct{})}
	r.schemas[id] = e
	if len(r.schemas) > maxFailedEntries {
		r.dropExpired()
	}
	r.mu.Unlock()

	// The fetch is shared: it must not end because the caller that
	// started it went away.
	go func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*r.timeout)
		defer cancel()
		s, err := r.fetch(fctx, id)
		r.mu.Lock()
		e.s = s
		if err != nil {
			e.err = fmt.Errorf("schema %d: %w", id, err)
			e.expires = r.now().Add(failTTL)
			if errors.Is(err, ErrUnreachable) {
				r.downUntil, r.downErr = e.expires, err
			}
		}
		r.mu.Unlock()
		close(e.done)
	}()
	return e.wait(ctx, id)
}

// dropExpired forgets failures past their time, so that corrupt bytes
// naming random schema ids do not grow the map without end. r.mu is held.
func (r *Registry) dropExpired() {
	now := r.now()
	for id, e := range r.schemas {
		if !e.expires.IsZero() && now.After(e.expires) {
			delete(r.schemas, id)
		}
	}
}

func (e *entry) wait(ctx context.Context, id int) (*schema, error) {
	select {
	case <-e.done:
		return e.s, e.err
	case <-ctx.Done():
		return nil, fmt.Errorf("schema %d: waiting for the registry: %w", id, context.Cause(ctx))
	}
}

// idAnswer is the registry's answer for a schema id, and (with Subject
// and Version) for a subject version.
type idAnswer struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType"`
	References []reference `json:"references"`
}

type reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// fetch asks the registry for schema id and its references, and parses it.
func (r *Registry) fetch(ctx context.Context, id int) (*schema, error) {
	var a idAnswer
	if err := r.get(ctx, "/schemas/ids/"+strconv.Itoa(id), &a); err != nil {
		return nil, err
	}
	s := &schema{id: id}
	switch strings.ToUpper(a.SchemaType) {
	case "", "AVRO":
		s.format = FormatAvro
	case "PROTOBUF":
		s.format = FormatProtobuf
	case "JSON":
		s.format = FormatJSONSchema
	default:
		return nil, fmt.Errorf("unsupported schema type %q", a.SchemaType)
	}
	// The subject and version are for display only: a registry without
	// this endpoint still decodes.
	var versions []struct {
		Subject string `json:"subject"`
		Version int    `json:"version"`
	}
	if err := r.get(ctx, "/schemas/ids/"+strconv.Itoa(id)+"/versions", &versions); err == nil {
		for _, v := range versions {
			s.versions = append(s.versions, queue.SchemaRef{ID: id, Subject: v.Subject, Version: v.Version})
		}
	}
	refs, err := r.references(ctx, a.References)
	if err != nil {
		return nil, err
	}
	switch s.format {
	case FormatAvro:
		s.avro, err = parseAvro(a.Schema, refs)
	case FormatProtobuf:
		s.proto, err = parseProto(ctx, a.Schema, refs)
	default:
		// A JSON payload decodes without its schema; a schema that is
		// not JSON still says something is wrong.
		if !json.Valid([]byte(a.Schema)) {
			err = errors.New("the JSON schema is not JSON")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("parse %s schema: %w", s.format, err)
	}
	return s, nil
}

// resolved is a referenced schema: its reference name (an Avro type name,
// a Protobuf import path) and text, listed dependencies first.
type resolved struct {
	name, schema string
}

// references fetches refs and theirs, depth first, each subject version
// once, and lists them so that every schema comes after those it refers to.
func (r *Registry) references(ctx context.Context, refs []reference) ([]resolved, error) {
	var out []resolved
	seen := map[string]bool{}
	var walk func(refs []reference, depth int) error
	walk = func(refs []reference, depth int) error {
		if depth > maxRefDepth {
			return errors.New("schema references nested too deep")
		}
		for _, ref := range refs {
			key := ref.Subject + "\x00" + strconv.Itoa(ref.Version)
			if seen[key] {
				continue
			}
			seen[key] = true
			if len(seen) > maxRefs {
				return fmt.Errorf("more than %d schema references", maxRefs)
			}
			var a idAnswer
			path := "/subjects/" + url.PathEscape(ref.Subject) + "/versions/" + strconv.Itoa(ref.Version)
			if ref.Version <= 0 {
				path = "/subjects/" + url.PathEscape(ref.Subject) + "/versions/latest"
			}
			if err := r.get(ctx, path, &a); err != nil {
				return fmt.Errorf("reference %s (subject %s version %d): %w", ref.Name, ref.Subject, ref.Version, err)
			}
			if err := walk(a.References, depth+1); err != nil {
				return err
			}
			out = append(out, resolved{name: ref.Name, schema: a.Schema})
		}
		return nil
	}
	if err := walk(refs, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// Subjects lists the registry's subjects: queuewatch check's proof that
// the registry answers and the credentials are accepted.
func (r *Registry) Subjects(ctx context.Context) ([]string, error) {
	var subjects []string
	if err := r.get(ctx, "/subjects", &subjects); err != nil {
		return nil, err
	}
	return subjects, nil
}

// get GETs path (escaped) below the base URL and decodes the JSON answer into v.
func (r *Registry) get(ctx context.Context, path string, v any) error {
	// path is escaped already (a subject may hold a slash: %2F).
	u := r.base.String() + path
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, http.NoBody)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/vnd.schemaregistry.v1+json, application/json")
	if r.user != "" {
		req.SetBasicAuth(r.user, r.password)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		// The client's error names the URL, which holds no credentials.
		return fmt.Errorf("%w: %w", ErrUnreachable, r.unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("%w: GET %s: read answer: %w", ErrUnreachable, path, err)
	}
	if len(body) > maxBody {
		return fmt.Errorf("GET %s: answer larger than %d bytes", path, maxBody)
	}
	if resp.StatusCode != http.StatusOK {
		msg := registryMessage(body)
		switch {
		case resp.StatusCode == http.StatusNotFound:
			return fmt.Errorf("%w: GET %s: %s", ErrNotFound, path, msg)
		case resp.StatusCode >= 500:
			return fmt.Errorf("%w: GET %s: %s: %s", ErrUnreachable, path, resp.Status, msg)
		default:
			return fmt.Errorf("GET %s: %s: %s", path, resp.Status, msg)
		}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: answer is not the expected JSON: %w", path, err)
	}
	return nil
}

// unwrapURLError drops the *url.Error wrapper (method and URL) for a
// shorter message: the URL is the configured one.
func (r *Registry) unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Errorf("GET %s: no answer within %s", redacted(mustParse(ue.URL)), r.timeout)
		}
		return fmt.Errorf("GET %s: %w", redacted(mustParse(ue.URL)), ue.Err)
	}
	return err
}

func mustParse(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		return &url.URL{}
	}
	return u
}

// registryMessage is the message of a registry error answer
// ({"error_code": 40403, "message": "..."}), or the start of the body.
func registryMessage(body []byte) string {
	var e struct {
		Code    int    `json:"error_code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && e.Message != "" {
		return fmt.Sprintf("%s (error code %d)", truncate(e.Message, 300), e.Code)
	}
	return truncate(strings.TrimSpace(string(body)), 300)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
