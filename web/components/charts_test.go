package components

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryHistoryChartDrawn: every kind of history chart a page asks for
// (@historyChart's third argument) is one app.js draws: its series are in
// CHART_KINDS and initChart looks for it. A kind left out renders an empty
// box, with no error anywhere.
func TestEveryHistoryChartDrawn(t *testing.T) {
	js, err := os.ReadFile("../static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	templs, err := filepath.Glob("*.templ")
	if err != nil {
		t.Fatal(err)
	}
	call := regexp.MustCompile(`@historyChart\("[^"]*", "[^"]*", "([a-z]+)"`)
	var kinds int
	for _, f := range templs {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(src), -1) {
			kinds++
			if kind := m[1]; !strings.Contains(string(js), "\n    "+kind+": [") || !strings.Contains(string(js), `[data-chart="`+kind+`"]`) {
				t.Errorf("%s draws a %q history chart that app.js does not (CHART_KINDS and initChart's selector)", f, kind)
			}
		}
	}
	if kinds < 7 {
		t.Fatalf("found %d history charts in the templates; the pattern no longer matches the calls", kinds)
	}
}
