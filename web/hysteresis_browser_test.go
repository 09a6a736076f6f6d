package web

import (
	"context"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuewatch/queuewatch/alerts"
	"github.com/queuewatch/queuewatch/collectors"
	"github.com/queuewatch/queuewatch/queue"
)

// flapGroup is one group of the scripted cluster at a poll: its members
// and lag on events/0, whose committed offset moves 100 a poll while it
// has members.
type flapGroup struct {
	members int
	lag     int64
}

// TestBrowserHysteresis runs the real collector and Evaluator (window 3,
// the default hysteresis of two polls) over a scripted Kafka cluster, a
// poll at a time, and reads the pages in chromium: a group without members
// for one poll stays ok, its page saying what that poll found; two polls
// make it stop, since the first of them; and "Needs attention" keeps its
// order while the stopped groups' lags swap between polls.
func TestBrowserHysteresis(t *testing.T) {
	b := newBrowser(t, 1280, 900)
	groups := map[string]flapGroup{"analytics-slow": {2, 50}, "billing": {0, 100}, "ledger-reader": {1, 900}}
	committed := map[string]int64{}
	src := &outboxSource{name: "prod", at: time.Now().Add(-8 * 15 * time.Second), snap: func(int, time.Time) *queue.Snapshot {
		s := &queue.Snapshot{}
		for _, name := range []string{"analytics-slow", "billing", "ledger-reader"} {
			g := groups[name]
			if g.members > 0 { // only members commit
				committed[name] += 100
			}
			committed := 1000 + committed[name]
			s.Groups = append(s.Groups, queue.ConsumerGroup{
				Cluster: "prod", Name: name, Members: g.members,
				Partitions: []queue.PartitionLag{{Topic: "events", Committed: committed, HasCommit: true, End: committed + g.lag, Lag: g.lag}},
			})
		}
		return s
	}}
	col := collectors.New([]collectors.Source{kafkaBroker{src}}, collectors.Options{
		Interval: 15 * time.Second, History: time.Hour, Evaluator: alerts.NewEvaluator(alerts.StatusOptions{Window: 3}),
	})
	ts := httptest.NewServer(New(Options{Monitor: col, Metrics: col.Handler(prometheus.NewRegistry())}))
	t.Cleanup(ts.Close)
	poll := func(change map[string]flapGroup) {
		for name, g := range change {
			groups[name] = g
		}
		col.PollOnce(context.Background())
	}
	attention := func() []string {
		b.run(t, chromedp.Navigate(ts.URL+"/"))
		return evalJS[[]string](t, b, `Array.from(document.querySelectorAll('.attention .att-name a')).map(a => a.textContent)`)
	}
	groupPage := func(name string) (status, sentence string) {
		b.run(t, chromedp.Navigate(ts.URL+queue.GroupPage("prod", name)))
		return evalJS[string](t, b, `document.querySelector('.badge').className`), evalJS[string](t, b, `document.querySelector('p.sentence').textContent`)
	}

	poll(nil)
	poll(nil)
	poll(map[string]flapGroup{"ledger-reader": {0, 900}}) // ledger-reader's members leave
	// ledger-reader stays without members; analytics-slow loses its
	// members for this poll only; the lags swap.
	poll(map[string]flapGroup{"analytics-slow": {0, 50}, "billing": {0, 900}, "ledger-reader": {0, 100}})
	want := []string{"ledger-reader", "billing"} // both stop: the latest onset first
	if got := attention(); !slices.Equal(got, want) {
		t.Errorf("needs attention after poll 4: %q; want %q", got, want)
	}
	status, sentence := groupPage("analytics-slow")
	if !strings.Contains(status, "st-ok") || !strings.HasPrefix(sentence, "the last poll found stop (no members, lag 50), shown once 2 polls in a row find it") {
		t.Errorf("analytics-slow after one poll without members: %q %q; want ok, saying what the last poll found", status, sentence)
	}
	shots := os.Getenv("QW_SCREENSHOTS")
	if shots != "" {
		sqsScreenshot(t, b, ts.URL+queue.GroupPage("prod", "analytics-slow"), shots, "hysteresis-held-group")
	}

	poll(map[string]flapGroup{"analytics-slow": {2, 50}, "billing": {0, 100}, "ledger-reader": {0, 900}})
	if got := attention(); !slices.Equal(got, want) {
		t.Errorf("needs attention after poll 5, lags swapped back: %q; want %q", got, want)
	}
	if status, sentence := groupPage("analytics-slow"); !strings.Contains(status, "st-ok") || strings.Contains(sentence, "last poll") {
		t.Errorf("analytics-slow with members again: %q %q; want plain ok", status, sentence)
	}

	poll(map[string]flapGroup{"analytics-slow": {0, 50}})
	poll(nil) // the second poll in a row without members
	want = []string{"analytics-slow", "ledger-reader", "billing"}
	if got := attention(); !slices.Equal(got, want) {
		t.Errorf("needs attention after analytics-slow stopped: %q; want %q", got, want)
	}
	since := regexp.MustCompile(`^no members since \d\d:\d\d UTC \(15s\), lag 50$`)
	if status, sentence := groupPage("analytics-slow"); !strings.Contains(status, "st-stop") || !since.MatchString(sentence) {
		t.Errorf("analytics-slow after two polls without members: %q %q; want stop since the first", status, sentence)
	}
	if shots != "" {
		sqsScreenshot(t, b, ts.URL+"/", shots, "hysteresis-overview")
	}
}
