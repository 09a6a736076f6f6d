package kafka

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// Connect is the access to one Kafka Connect cluster's REST API, listed
// under the Kafka cluster its workers use (kafka[].connect). It is
// immutable and safe for concurrent use.
type Connect struct {
	name, base string
	client     *http.Client
	// authorization is the Authorization header's value, "" for none.
	authorization string
}

// maxConnectBody bounds one answer: a thousand connectors with their
// configs and traces fit in a few megabytes.
const maxConnectBody = 64 << 20

// newConnect builds the access to c; it reads the TLS files and the
// password or token file, and does no network I/O.
func newConnect(c config.Connect) (*Connect, error) {
	tlsCfg, err := c.TLS.Config()
	if err != nil {
		return nil, fmt.Errorf("connect %s: tls: %w", c.Name, err)
	}
	auth, err := connectAuthorization(c.Auth)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", c.Name, err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg
	// No client timeout: every request carries the poll's deadline.
	return &Connect{
		name: c.Name, base: strings.TrimRight(c.URL, "/"),
		client: &http.Client{Transport: tr}, authorization: auth,
	}, nil
}

// connectAuthorization is the Authorization header for a: Basic for a
// username, Bearer for a token, "" for none; secret files are read here,
// once.
func connectAuthorization(a config.ConnectAuth) (string, error) {
	password, err := secret(a.Password, a.PasswordFile, "auth.password_file")
	if err != nil {
		return "", err
	}
	token, err := secret(a.Token, a.TokenFile, "auth.token_file")
	if err != nil {
		return "", err
	}
	switch {
	case a.Username != "":
		r := &http.Request{Header: http.Header{}}
		r.SetBasicAuth(a.Username, password)
		return r.Header.Get("Authorization"), nil
	case token != "":
		return "Bearer " + token, nil
	}
	return "", nil
}

// secret is value, or the content of file with its surrounding white space
// trimmed.
func secret(value, file, key string) (string, error) {
	if file == "" {
		return value, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Name is the Connect cluster's name in the config.
func (c *Connect) Name() string { return c.name }

// Connectors reads every connector of the Connect cluster with its tasks'
// states and its config in one request (GET
// /connectors?expand=status&expand=info), for the Kafka cluster named
// cluster, sorted by name.
func (c *Connect) Connectors(ctx context.Context, cluster string) ([]queue.Connector, error) {
	status, body, err := c.do(ctx, http.MethodGet, "/connectors?expand=status&expand=info")
	if err != nil {
		return nil, fmt.Errorf("connect %s: list connectors: %w", c.name, err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("connect %s: list connectors: %d %s: %s", c.name, status, http.StatusText(status), firstLine(connectMessage(body)))
	}
	return ParseConnectors(body, cluster, c.name)
}

// ErrNoConnector is the error of a restart of a connector the Connect
// cluster does not have.
var ErrNoConnector = errors.New("no such connector")

// ConnectRestart is what Connect answered to a restart of failed tasks:
// the connector's state and each task's, as the restart left them
// (RESTARTING for what it restarts). Restarted is false when Connect
// restarted nothing: nothing had failed.
type ConnectRestart struct {
	Restarted bool           `json:"restarted"`
	State     string         `json:"state,omitempty"`
	Tasks     map[int]string `json:"tasks,omitempty"`
}

// RestartFailed restarts the connector named name and its failed tasks
// only (POST /connectors/{name}/restart?includeTasks=true&onlyFailed=true,
// KIP-745, Connect 3.0 and later): running tasks keep running. A connector
// Connect does not have is ErrNoConnector; a rebalance in progress (409)
// is an error naming it, to be retried.
func (c *Connect) RestartFailed(ctx context.Context, name string) (ConnectRestart, error) {
	status, body, err := c.do(ctx, http.MethodPost, "/connectors/"+url.PathEscape(name)+"/restart?includeTasks=true&onlyFailed=true")
	if err != nil {
		return ConnectRestart{}, fmt.Errorf("connect %s: restart %s: %w", c.name, name, err)
	}
	switch status {
	case http.StatusNoContent:
		return ConnectRestart{}, nil
	case http.StatusAccepted, http.StatusOK:
		return parseRestart(body)
	case http.StatusNotFound:
		return ConnectRestart{}, fmt.Errorf("connect %s: restart %s: %w", c.name, name, ErrNoConnector)
	}
	return ConnectRestart{}, fmt.Errorf("connect %s: restart %s: %d %s: %s", c.name, name, status, http.StatusText(status), firstLine(connectMessage(body)))
}

// parseRestart reads a restart's 202 answer, the connector's status.
func parseRestart(body []byte) (ConnectRestart, error) {
	var st struct {
		Connector connectTask `json:"connector"`
		Tasks     []struct {
			ID    int    `json:"id"`
			State string `json:"state"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return ConnectRestart{}, fmt.Errorf("restart answer: %w", err)
	}
	r := ConnectRestart{State: st.Connector.State, Tasks: map[int]string{}, Restarted: st.Connector.State == queue.ConnectRestarting}
	for _, t := range st.Tasks {
		r.Tasks[t.ID] = t.State
		r.Restarted = r.Restarted || t.State == queue.ConnectRestarting
	}
	return r, nil
}

// do sends one request to the REST API with the configured authorization
// and returns the answer's status and body, read up to maxConnectBody.
func (c *Connect) do(ctx context.Context, method, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if c.authorization != "" {
		req.Header.Set("Authorization", c.authorization)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxConnectBody))
	return resp.StatusCode, body, err
}

// connectMessage is the message of a Connect error answer
// ({"error_code": 401, "message": "…"}), else the body.
func connectMessage(body []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && e.Message != "" {
		return e.Message
	}
	return string(body)
}

// connectorExpanded is one connector of GET /connectors?expand=status&expand=info.
type connectorExpanded struct {
	Status *struct {
		Type      string      `json:"type"`
		Connector connectTask `json:"connector"`
		Tasks     []struct {
			ID int `json:"id"`
			connectTask
		} `json:"tasks"`
	} `json:"status"`
	Info *struct {
		Type   string            `json:"type"`
		Config map[string]string `json:"config"`
	} `json:"info"`
}

type connectTask struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace"`
}

// ParseConnectors reads the answer of GET
// /connectors?expand=status&expand=info from Connect cluster connect of
// Kafka cluster cluster. A connector Connect gave no status for (deleted
// while it answered) is listed with an error.
func ParseConnectors(body []byte, cluster, connect string) ([]queue.Connector, error) {
	var all map[string]connectorExpanded
	if err := json.Unmarshal(body, &all); err != nil {
		return nil, fmt.Errorf("connect %s: list connectors: %w", connect, err)
	}
	out := make([]queue.Connector, 0, len(all))
	for name, x := range all {
		out = append(out, buildConnector(cluster, connect, name, x))
	}
	slices.SortFunc(out, func(a, b queue.Connector) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

func buildConnector(cluster, connect, name string, x connectorExpanded) queue.Connector {
	c := queue.Connector{Cluster: cluster, Connect: connect, Name: name}
	if x.Info != nil {
		c.Type = x.Info.Type
		applyConnectorConfig(&c, x.Info.Config)
	}
	if x.Status == nil {
		c.Err = "Connect gave no status"
		return c
	}
	c.Type = cmp.Or(x.Status.Type, c.Type)
	c.State, c.WorkerID, c.Trace = x.Status.Connector.State, x.Status.Connector.WorkerID, firstLine(x.Status.Connector.Trace)
	for _, t := range x.Status.Tasks {
		c.Tasks = append(c.Tasks, queue.ConnectTask{ID: t.ID, State: t.State, WorkerID: t.WorkerID, Trace: firstLine(t.Trace)})
	}
	slices.SortFunc(c.Tasks, func(a, b queue.ConnectTask) int { return cmp.Compare(a.ID, b.ID) })
	if c.Type == "sink" && c.Group == "" {
		c.Group = "connect-" + name
	}
	return c
}

// applyConnectorConfig sets what a sink's config says of where it reads
// and dead-letters: its topics, its consumer group (when overridden) and
// its dead-letter topic.
func applyConnectorConfig(c *queue.Connector, cfg map[string]string) {
	for t := range strings.SplitSeq(cfg["topics"], ",") {
		if t = strings.TrimSpace(t); t != "" {
			c.Topics = append(c.Topics, t)
		}
	}
	c.Group = strings.TrimSpace(cfg["consumer.override.group.id"])
	c.DLQTopic = strings.TrimSpace(cfg["errors.deadletterqueue.topic.name"])
}

// firstLine is s up to its first line break: of a Java trace, the
// exception and its message.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}
