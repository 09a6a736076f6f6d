package alerts

import (
	"regexp"
	"strconv"
	"testing"
)

// matcherRE reads one PromQL label matcher of a segment.
var matcherRE = regexp.MustCompile(`(group|dlq)(=~|!~)("(?:[^"\\]|\\.)*")`)

// selects reports whether a segment's matchers select the label value name,
// the way Prometheus evaluates them (anchored regexes).
func selects(t *testing.T, matchers, name string) bool {
	t.Helper()
	for _, m := range matcherRE.FindAllStringSubmatch(matchers, -1) {
		pat, err := strconv.Unquote(m[3])
		if err != nil {
			t.Fatalf("matcher %s: %v", m[0], err)
		}
		if regexp.MustCompile("^(?:"+pat+")$").MatchString(name) != (m[2] == "=~") {
			return false
		}
	}
	return true
}

// TestRulesAgreeWithConfigFor: for every name, exactly one segment of each
// threshold selects it, and its threshold is the one config.Alerts.For
// gives that name: the rule file judges each group and DLQ as queuewatch
// itself does, because rule generation asks config instead of copying it.
func TestRulesAgreeWithConfigFor(t *testing.T) {
	a := loadOverrideConfig(t).Alerts
	segs, err := overrideSegments(a)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{
		"batch-nightly", "batch-payments", "eu-payments", "billing", "reports", "orders",
		"audit.orders", `"quoted"`, "reports.dlq", "", "x-payments-y",
	}
	for _, name := range names {
		for kind, want := range map[thresholdKind]string{
			lagHigh:        strconv.FormatInt(a.For(name, "").LagHigh, 10),
			lagSecondsHigh: seconds(a.For(name, "").LagSecondsHigh),
			dlqAgeHigh:     seconds(a.For("", name).DLQAgeHigh),
		} {
			var got []string
			for _, s := range segs[kind] {
				if selects(t, s.matchers, name) {
					got = append(got, s.threshold)
				}
			}
			if len(got) != 1 || got[0] != want {
				t.Errorf("%q, threshold kind %d: rules select thresholds %v; config.For gives %s", name, kind, got, want)
			}
		}
	}
}
