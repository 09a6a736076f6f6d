package pubsub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"
)

// monitoringURL is Cloud Monitoring's API.
const monitoringURL = "https://monitoring.googleapis.com"

// monitoringWindow is how far back a read asks for points. Pub/Sub's
// subscription metrics are sampled every 60 s and become visible up to
// 120 s later (Google's metrics list), so the newest point is usually 2 to
// 4 minutes old; ten minutes leaves room for a late one.
const monitoringWindow = 10 * time.Minute

// The subscription metrics a read asks for: one projects.timeSeries.list
// call each (and one more per page of 100,000 points), whatever the
// number of subscriptions.
const (
	MetricUndelivered  = "pubsub.googleapis.com/subscription/num_undelivered_messages"
	MetricOldestAge    = "pubsub.googleapis.com/subscription/oldest_unacked_message_age"
	MetricDeadLettered = "pubsub.googleapis.com/subscription/dead_letter_message_count"
	MetricExpiredAcks  = "pubsub.googleapis.com/subscription/expired_ack_deadlines_count"
	MetricBacklogBytes = "pubsub.googleapis.com/subscription/backlog_bytes"
)

// MonitoringMetrics are the metrics one read asks for, in call order.
var MonitoringMetrics = []string{MetricUndelivered, MetricOldestAge, MetricDeadLettered, MetricExpiredAcks, MetricBacklogBytes}

// SubscriptionMetrics are Cloud Monitoring's newest figures of one
// subscription; each Has* says whether a point was found.
type SubscriptionMetrics struct {
	// At is the end time of the newest point read: the figures trail the
	// present by minutes.
	At time.Time
	// Undelivered is num_undelivered_messages: the backlog.
	Undelivered    int64
	HasUndelivered bool
	// OldestAge is oldest_unacked_message_age.
	OldestAge    time.Duration
	HasOldestAge bool
	// DeadLettered is dead_letter_message_count in the newest sample
	// period (a delta, about a minute).
	DeadLettered int64
	// ExpiredAcks is expired_ack_deadlines_count in the newest period.
	ExpiredAcks  int64
	BacklogBytes int64
}

// Monitoring reads a project's subscription metrics from Cloud
// Monitoring's REST API.
type Monitoring struct {
	base    string
	project string
	http    *http.Client
	// calls counts timeSeries.list calls, for the cost check prints.
	calls atomic.Int64
}

// monitoring returns the project's Monitoring reader, making it on first
// use: with the emulator, a plain HTTP client (the tests' recorded
// server); else Application Default Credentials or the key file, with the
// read-only Monitoring scope.
func (c *Cluster) monitoring(ctx context.Context) (*Monitoring, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mon != nil {
		return c.mon, nil
	}
	base := monitoringURL
	if c.cfg.Monitoring.Endpoint != "" {
		base = strings.TrimSuffix(c.cfg.Monitoring.Endpoint, "/")
	}
	client := &http.Client{Timeout: 30 * time.Second}
	if c.Emulator() == "" {
		opts := []option.ClientOption{option.WithScopes("https://www.googleapis.com/auth/monitoring.read")}
		if c.cfg.CredentialsFile != "" {
			opts = append(opts, option.WithAuthCredentialsFile(option.ServiceAccount, c.cfg.CredentialsFile))
		}
		var err error
		client, _, err = htransport.NewClient(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("pubsub %s: monitoring client: %w", c.cfg.Name, err)
		}
	}
	c.mon = &Monitoring{base: base, project: c.cfg.Project, http: client}
	return c.mon, nil
}

// SubscriptionMetrics reads every MonitoringMetrics metric of the
// project's subscriptions as of now, one call per metric, keyed by
// subscription id. A failed metric is in the error; the others are kept.
func (c *Cluster) SubscriptionMetrics(ctx context.Context, now time.Time) (map[string]*SubscriptionMetrics, error) {
	m, err := c.monitoring(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]*SubscriptionMetrics{}
	var errs []string
	for _, metric := range MonitoringMetrics {
		series, err := m.list(ctx, metric, now)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		for _, s := range series {
			add(out, metric, s)
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("pubsub %s: cloud monitoring: %s", c.cfg.Name, strings.Join(errs, "; "))
	}
	return out, nil
}

// MonitoringCalls is how many timeSeries.list calls were made so far.
func (c *Cluster) MonitoringCalls() int64 {
	c.mu.Lock()
	m := c.mon
	c.mu.Unlock()
	if m == nil {
		return 0
	}
	return m.calls.Load()
}

// add puts s's newest point into its subscription's figures.
func add(out map[string]*SubscriptionMetrics, metric string, s timeSeries) {
	id := s.Resource.Labels["subscription_id"]
	if id == "" || len(s.Points) == 0 {
		return
	}
	m := out[id]
	if m == nil {
		m = &SubscriptionMetrics{}
		out[id] = m
	}
	// Points come newest first.
	p := s.Points[0]
	v := p.Value.int()
	if p.Interval.EndTime.After(m.At) {
		m.At = p.Interval.EndTime
	}
	switch metric {
	case MetricUndelivered:
		m.Undelivered, m.HasUndelivered = v, true
	case MetricOldestAge:
		m.OldestAge, m.HasOldestAge = time.Duration(v)*time.Second, true
	case MetricDeadLettered:
		m.DeadLettered = v
	case MetricExpiredAcks:
		m.ExpiredAcks = v
	case MetricBacklogBytes:
		m.BacklogBytes = v
	}
}

// timeSeries is the part of a TimeSeries queuewatch reads.
type timeSeries struct {
	Resource struct {
		Labels map[string]string `json:"labels"`
	} `json:"resource"`
	Points []struct {
		Interval struct {
			EndTime time.Time `json:"endTime"`
		} `json:"interval"`
		Value typedValue `json:"value"`
	} `json:"points"`
}

// typedValue is a TypedValue: int64Value comes as a JSON string (the
// protobuf JSON mapping of int64), doubleValue as a number.
type typedValue struct {
	Int64  string   `json:"int64Value"`
	Double *float64 `json:"doubleValue"`
}

func (v typedValue) int() int64 {
	if v.Double != nil {
		return int64(*v.Double)
	}
	n, _ := strconv.ParseInt(v.Int64, 10, 64)
	return n
}

// list reads every page of one metric's series over the window.
func (m *Monitoring) list(ctx context.Context, metric string, now time.Time) ([]timeSeries, error) {
	var out []timeSeries
	token := ""
	for {
		q := url.Values{}
		q.Set("filter", `metric.type = "`+metric+`" AND resource.type = "pubsub_subscription"`)
		q.Set("interval.startTime", now.Add(-monitoringWindow).UTC().Format(time.RFC3339))
		q.Set("interval.endTime", now.UTC().Format(time.RFC3339))
		q.Set("view", "FULL")
		if token != "" {
			q.Set("pageToken", token)
		}
		var page struct {
			TimeSeries    []timeSeries `json:"timeSeries"`
			NextPageToken string       `json:"nextPageToken"`
		}
		if err := m.get(ctx, "/v3/projects/"+url.PathEscape(m.project)+"/timeSeries?"+q.Encode(), &page); err != nil {
			return out, fmt.Errorf("%s: %w", strings.TrimPrefix(metric, "pubsub.googleapis.com/"), err)
		}
		out = append(out, page.TimeSeries...)
		if page.NextPageToken == "" {
			return out, nil
		}
		token = page.NextPageToken
	}
}

// get sends one call and decodes its JSON answer; an error answer's
// message is the error.
func (m *Monitoring) get(ctx context.Context, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.base+path, nil)
	if err != nil {
		return err
	}
	m.calls.Add(1)
	resp, err := m.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
				Status  string `json:"status"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
			return fmt.Errorf("%s %s: %s", resp.Status, e.Error.Status, e.Error.Message)
		}
		return fmt.Errorf("%s", resp.Status)
	}
	return json.Unmarshal(body, into)
}
