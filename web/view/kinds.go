package view

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/queuewatch/queuewatch/queue"
	"github.com/queuewatch/queuewatch/web/components"
)

// A Kind is one kind of reader as web lists it, declared once in its own
// file (groups in tables.go, the others in <broker>.go) and listed in
// Kinds, as alerts lists its ruleSets and grafana its dashboardParts:
// its overview tab, its rows of a snapshot, its columns' sort keys, the
// filter's fields, the name order that breaks ties, its spark, where its
// page of rows goes, and the path that names one (its route object and
// scope id). The overview, the API's lists and the route table read it;
// a kind's own page and JSON are its files in web/ui and web/api.
type Kind[R any] struct {
	Tab components.OverviewTab
	// Rows are a snapshot's readers of this kind, as table rows.
	Rows func(snap *queue.Snapshot) []R
	// Reader is the reader a row shows, and Status its status.
	Reader func(R) queue.Reader
	Status func(R) queue.Status
	// NotReader, when set, says a row is not judged as a reader (a
	// RabbitMQ queue that is a DLQ): it neither counts nor needs attention.
	NotReader func(R) bool
	// Sorts are the table's sortable columns; DefaultSort is the one a
	// tab opens with, and Names breaks ties (and orders equals).
	Sorts       map[string]sortFunc[R]
	DefaultSort string
	Names       func(a, b R) int
	// Filter are the fields the filter box matches.
	Filter func(R) []string
	// Trend, when set, is the row's spark and Series what it draws.
	Trend  func(*R) *components.Spark
	Series string
	// Put puts the tab's page of rows in the overview.
	Put func(d *components.OverviewData, page []R)
	// Path is the path that names one reader of the kind: its parameters
	// in order, and the reader they name (its scope id).
	Path Path
	// Noun names one reader of the kind ("no such " + Noun is Find's 404).
	Noun string
	// Lookup finds the reader the path's values name in one snapshot of
	// its cluster, through the snapshot's own index: a row with its reader
	// set (a page reads the reader, not the row's columns).
	Lookup func(snap *queue.Snapshot, values []string) (R, bool)
}

// Path is how a route's path names a reader: its parameters, in order, and
// the reader their values name, for the route's authorization.
type Path struct {
	Params []string
	Reader func(values []string) queue.Reader
}

// Kinds are the reader kinds the overview lists, in its tabs' order (the
// DLQ tab, which lists no readers, follows them).
var Kinds = []Lister{&Groups, &ShareGroups, &StreamsGroups, &Connectors, &Consumers, &SQSQueues, &PubSubSubscriptions, &KinesisApps, &Queues}

// A Lister is a Kind whatever its row type: what the overview and the
// route table need of it.
type Lister interface {
	// List starts one request's list of the kind.
	List() List
	// ReaderPath is how a path names one reader of the kind.
	ReaderPath() Path
}

// A List is one request's rows of a kind, gathered snapshot by snapshot.
type List interface {
	Tab() components.OverviewTab
	Add(snap *queue.Snapshot)
	// Len is the rows' count, for the tab; Readers those judged as
	// readers; NotOK the readers that are not ok, for the summary and
	// "Needs attention".
	Len() int
	Readers() int
	NotOK() []queue.Reader
	// Fill puts the requested page of rows, filtered and sorted, in d,
	// each with its spark.
	Fill(c echo.Context, d *components.OverviewData, spark func(queue.Reader, string) components.Spark)
}

// List starts one request's list of k.
func (k *Kind[R]) List() List { return &list[R]{k: k} }

// ReaderPath is how a path names one reader of k.
func (k *Kind[R]) ReaderPath() Path { return k.Path }

// All are the rows of every snapshot the request's principal sees, worst
// first: the API's list of the kind.
func (k *Kind[R]) All(m interface{ Snapshots() []*queue.Snapshot }) []R {
	var rows []R
	for _, snap := range m.Snapshots() {
		rows = append(rows, k.Rows(snap)...)
	}
	SortRows(rows, k.Sorts["status"], "desc", k.Names)
	return rows
}

// Find is the reader the path names, in the principal's view (m), with
// the snapshot that holds it: 404 naming nothing when the principal sees
// no such reader. Only its broker's poll lists a kind's readers, so the
// cluster's snapshot that has it is the one.
func (k *Kind[R]) Find(c echo.Context, m interface{ Snapshots() []*queue.Snapshot }) (*queue.Snapshot, R, error) {
	var none R
	values, err := PathValues(c, k.Path.Params)
	if err != nil {
		return nil, none, err
	}
	for _, snap := range m.Snapshots() {
		if snap.Cluster != values[0] {
			continue
		}
		if r, ok := k.Lookup(snap, values); ok {
			return snap, r, nil
		}
	}
	return nil, none, echo.NewHTTPError(http.StatusNotFound, "no such "+k.Noun)
}

type list[R any] struct {
	k    *Kind[R]
	rows []R
}

func (l *list[R]) Tab() components.OverviewTab { return l.k.Tab }
func (l *list[R]) Add(snap *queue.Snapshot)    { l.rows = append(l.rows, l.k.Rows(snap)...) }
func (l *list[R]) Len() int                    { return len(l.rows) }

func (l *list[R]) Readers() int {
	n := 0
	for _, r := range l.rows {
		if l.k.NotReader == nil || !l.k.NotReader(r) {
			n++
		}
	}
	return n
}

func (l *list[R]) NotOK() []queue.Reader {
	var out []queue.Reader
	for _, r := range l.rows {
		if (l.k.NotReader == nil || !l.k.NotReader(r)) && l.k.Status(r) != queue.StatusOK {
			out = append(out, l.k.Reader(r))
		}
	}
	return out
}

func (l *list[R]) Fill(c echo.Context, d *components.OverviewData, spark func(queue.Reader, string) components.Spark) {
	k := l.k
	d.Table = TableState(c, "/", k.Tab.Key, k.Sorts, k.DefaultSort)
	rows := FilterRows(l.rows, d.Table.Q, k.Filter)
	SortRows(rows, k.Sorts[d.Table.Sort], d.Table.Dir, k.Names)
	page := Page(&d.Table, rows)
	if k.Trend != nil {
		for i := range page {
			*k.Trend(&page[i]) = spark(k.Reader(page[i]), k.Series)
		}
	}
	k.Put(d, page)
}

// TabOf is the overview tab with key: a reader kind's, the DLQs', or the
// default (the first kind's) for an unknown key.
func TabOf(key string) components.OverviewTab {
	for _, t := range Tabs() {
		if t.Key == key {
			return t
		}
	}
	return Tabs()[0]
}

// Tabs are the overview's tabs in their order on the page.
func Tabs() []components.OverviewTab {
	tabs := make([]components.OverviewTab, 0, len(Kinds)+1)
	for _, k := range Kinds {
		tabs = append(tabs, k.List().Tab())
	}
	return append(tabs, components.DLQTab)
}
