package collectors

import (
	"bytes"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// gatherText renders the named metric families in the text format, for
// writing golden files.
func gatherText(g prometheus.Gatherer, names []string) (string, error) {
	mfs, err := g.Gather()
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if slices.Contains(names, mf.GetName()) {
			if err := enc.Encode(mf); err != nil {
				return "", err
			}
		}
	}
	return buf.String(), nil
}
