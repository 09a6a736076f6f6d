package alerts

import (
	"strings"
	"testing"
	"time"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// TestReaderRuleShapes: the shared shapes build a broker's alerts from
// its description alone, the way a new broker's rules will be built: a
// status alert waits alerts.hysteresis_polls polls on the status series of its identity, and
// threshold alerts wait the window on the broker's own series, their
// overrides selecting on the reader's name label.
func TestReaderRuleShapes(t *testing.T) {
	cfg := config.Default()
	cfg.Alerts.Overrides = []config.Override{{Group: "batch-.*", LagHigh: 500}}
	p := newRuleParams(cfg)
	r := readers{
		status: "queuewatch_x_queue_status", identity: []string{"cluster", "queue"}, name: "queue", page: "/x",
		backlog:     func(m string) string { return selector("queuewatch_x_queue_visible", m) },
		lagSeconds:  func(m string) string { return selector("queuewatch_x_queue_age_seconds", m) },
		backlogKind: lagHigh, lagSecondsKind: lagSecondsHigh,
	}
	words := alertText{name: "XQueueAlert", severity: SeverityCritical, summary: "s", description: "over <threshold>"}

	st := r.inStatus(p, queue.StatusStop, words)
	if got, want := st.expr("", ""), `queuewatch_x_queue_visible and on (cluster, queue) (queuewatch_x_queue_status{status="stop"} == 1)`; got != want {
		t.Errorf("status expr\n got %s\nwant %s", got, want)
	}
	if st.forDur != 2*cfg.PollInterval || st.kind != noThreshold || st.page != "/x" || st.severity != SeverityCritical {
		t.Errorf("status alert %+v", st)
	}

	hi := r.backlogHigh(p, words)
	if hi.forDur != time.Duration(cfg.Alerts.Window)*cfg.PollInterval || hi.kind != lagHigh {
		t.Errorf("backlog alert for %s, kind %d", hi.forDur, hi.kind)
	}
	segs, err := kindSegments(cfg.Alerts, hi.kind, hi.label)
	if err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for _, s := range segs {
		exprs = append(exprs, hi.rule(s).Expr)
	}
	want := []string{
		`queuewatch_x_queue_visible{queue!~"batch-.*"} > 10000`,
		`queuewatch_x_queue_visible{queue=~"batch-.*"} > 500`,
	}
	if len(exprs) != len(want) || exprs[0] != want[0] || exprs[1] != want[1] {
		t.Errorf("backlog exprs\n got %q\nwant %q", exprs, want)
	}
	if got, want := r.lagSecondsHigh(p, words).expr("", "300"), `queuewatch_x_queue_age_seconds > 300`; got != want {
		t.Errorf("lag seconds expr %s, want %s", got, want)
	}
}

// TestStatusRulesWaitHysteresisPolls: every status alert waits as many
// polls as the evaluation waits before it shows a status
// (alerts.hysteresis_polls), whatever that is set to; SQS's wait for two
// reads of the account, whose statuses are judged across reads.
func TestStatusRulesWaitHysteresisPolls(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3} {
		cfg := config.Default()
		cfg.Alerts.HysteresisPolls = n
		want := time.Duration(max(n, 1)) * cfg.PollInterval
		if n == 0 {
			want = config.DefaultHysteresisPolls * cfg.PollInterval
		}
		data, err := Rules(cfg)
		if err != nil {
			t.Fatal(err)
		}
		statusRules := 0
		for _, r := range parseRules(t, data) {
			if !strings.Contains(r.Expr, `_status{status="`) {
				continue
			}
			statusRules++
			got, err := time.ParseDuration(r.For)
			if err != nil {
				t.Fatalf("%s: for %q: %v", r.Alert, r.For, err)
			}
			if strings.Contains(r.Expr, "queuewatch_sqs_queue_status") {
				want := sqsTwoReads(newRuleParams(cfg))
				if got != want {
					t.Errorf("hysteresis_polls %d: %s for %s; want two reads, %s", n, r.Alert, got, want)
				}
				continue
			}
			if strings.Contains(r.Expr, "queuewatch_kinesis_application_status") {
				if want := kinesisTwoReads(newRuleParams(cfg)); got != want {
					t.Errorf("hysteresis_polls %d: %s for %s; want two reads, %s", n, r.Alert, got, want)
				}
				continue
			}
			if got != want {
				t.Errorf("hysteresis_polls %d: %s for %s; want %s", n, r.Alert, got, want)
			}
		}
		if statusRules < 8 {
			t.Errorf("hysteresis_polls %d: %d status rules found; want every broker's", n, statusRules)
		}
	}
}
