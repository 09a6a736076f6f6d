package components

import (
	"net/url"
	"strconv"

	"github.com/queuewatch/queuewatch/queue"
)

// Chrome is what every page's frame shows: who is signed in and the health
// of every source.
type Chrome struct {
	Title   string
	Sources []queue.SourceStatus
	Now     Now
	// User and Role are shown in the header; AuthOff marks auth mode none.
	User    string
	Role    string
	AuthOff bool
	// SignOut offers a sign-out button (a session from an OIDC login).
	SignOut bool
	// Nav is the active navigation entry: "overview", "dlqs" or "replays".
	Nav string
	// AssetVersion is a hash of the embedded assets.
	AssetVersion string
	// Search is the header search box's text (the search page's query).
	Search string
}

// Table is a list's state as kept in the URL: which tab, sort column and
// direction, filter text and page.
type Table struct {
	Path  string
	Tab   string
	Sort  string
	Dir   string
	Q     string
	Page  int
	Pages int
	// Total is the number of rows after filtering; From and To are the
	// 1-based range shown.
	Total, From, To int
}

// PageSize is how many rows a list shows before paging.
const PageSize = 200

func (t Table) values() url.Values {
	v := url.Values{}
	if t.Tab != "" {
		v.Set("tab", t.Tab)
	}
	if t.Sort != "" {
		v.Set("sort", t.Sort)
	}
	if t.Dir != "" {
		v.Set("dir", t.Dir)
	}
	if t.Q != "" {
		v.Set("q", t.Q)
	}
	return v
}

func (t Table) url(v url.Values) string {
	if len(v) == 0 {
		return t.Path
	}
	return t.Path + "?" + v.Encode()
}

// SortURL is the link a column header points at: the column sorted in
// its natural direction, or the other direction when it is already sorted.
func (t Table) SortURL(key, natural string) string {
	v := t.values()
	dir := natural
	if t.Sort == key {
		dir = flip(t.Dir)
	}
	v.Set("sort", key)
	v.Set("dir", dir)
	return t.url(v)
}

// PageURL links to page p of the same list.
func (t Table) PageURL(p int) string {
	v := t.values()
	if p > 1 {
		v.Set("page", strconv.Itoa(p))
	}
	return t.url(v)
}

// TabURL links to another tab, keeping the filter.
func (t Table) TabURL(tab string) string {
	v := url.Values{}
	v.Set("tab", tab)
	if t.Q != "" {
		v.Set("q", t.Q)
	}
	return t.url(v)
}

// ClearURL is the list without its filter.
func (t Table) ClearURL() string {
	v := t.values()
	v.Del("q")
	return t.url(v)
}

// Arrow marks the sorted column: ▾ descending, ▴ ascending.
func (t Table) Arrow(key string) string {
	if t.Sort != key {
		return ""
	}
	if t.Dir == "asc" {
		return "▴"
	}
	return "▾"
}

// AriaSort is the aria-sort value of a column header.
func (t Table) AriaSort(key string) string {
	switch {
	case t.Sort != key:
		return "none"
	case t.Dir == "asc":
		return "ascending"
	}
	return "descending"
}

func flip(dir string) string {
	if dir == "asc" {
		return "desc"
	}
	return "asc"
}

// Spark is a sparkline ready to draw: an SVG polyline's points in a
// SparkW × SparkH box, and a title saying what it shows.
type Spark struct {
	Points string
	Title  string
	// Up tells whether the last value is above the first, for colour.
	Up bool
}

// Sparkline box size in SVG user units (and CSS pixels).
const (
	SparkW = 80
	SparkH = 18
)

// sparkMax is the most points a sparkline draws; longer histories are
// bucketed (max per bucket, so spikes survive).
const sparkMax = 60

// NewSpark draws values (oldest first) scaled to the box; the baseline is
// zero so a flat non-zero line sits above the axis.
func NewSpark(values []float64, title string) Spark {
	if len(values) == 0 {
		return Spark{Title: title}
	}
	values = bucket(values, sparkMax)
	if len(values) == 1 {
		// One poll so far: a flat line is more honest than a dot.
		values = []float64{values[0], values[0]}
	}
	hi := 0.0
	for _, v := range values {
		hi = max(hi, v)
	}
	b := make([]byte, 0, len(values)*10)
	step := float64(SparkW-2) / float64(len(values)-1)
	for i, v := range values {
		y := float64(SparkH - 1)
		if hi > 0 {
			y = 1 + float64(SparkH-2)*(1-v/hi)
		}
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendFloat(b, 1+step*float64(i), 'f', 1, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, y, 'f', 1, 64)
	}
	return Spark{Points: string(b), Title: title, Up: values[len(values)-1] > values[0]}
}

// bucket reduces values to at most n points, keeping each bucket's maximum.
func bucket(values []float64, n int) []float64 {
	if len(values) <= n {
		return values
	}
	out := make([]float64, n)
	for i := range out {
		lo, hi := i*len(values)/n, (i+1)*len(values)/n
		m := values[lo]
		for _, v := range values[lo+1 : hi] {
			m = max(m, v)
		}
		out[i] = m
	}
	return out
}

// Asset is the URL of an embedded static file, versioned so a new binary's
// assets are never served from a stale browser cache.
func (c Chrome) Asset(name string) string {
	if c.AssetVersion == "" {
		return "/static/" + name
	}
	return "/static/" + name + "?v=" + c.AssetVersion
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// dlxLabel names where a queue dead-letters: the exchange ("default
// exchange" when empty) and routing key.
func dlxLabel(exchange, key string) string {
	if exchange == "" {
		exchange = "(default exchange)"
	}
	if key == "" {
		return exchange
	}
	return exchange + " → " + key
}

func queryEscape(s string) string { return url.QueryEscape(s) }

func protoSuffix(p string) string {
	if p == "" {
		return ""
	}
	return " · " + p
}
