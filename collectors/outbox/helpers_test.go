package outbox

import (
	"database/sql"
	"math"
	"testing"
	"time"

	brokeroutbox "github.com/queuewatch/queuewatch/brokers/outbox"
	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// The dialects, as the tests name them.
const (
	Postgres = brokeroutbox.Postgres
	MySQL    = brokeroutbox.MySQL
	SQLite   = brokeroutbox.SQLite
)

// testSource is a source as a test describes it: the access to its
// database (a DSN, or an open pool in DB) and what it watches.
type testSource struct {
	Name             string
	Dialect          brokeroutbox.Dialect
	DSN              string
	DB               *sql.DB
	Tables           []Table
	Slots            []string
	StatementTimeout time.Duration
}

// newSource builds the access as app does and the source over it.
func newSource(t *testing.T, o testSource) *Source {
	t.Helper()
	var db *brokeroutbox.DB
	if o.DB != nil {
		db = brokeroutbox.Wrap(o.Name, o.Dialect, o.DB, o.StatementTimeout)
	} else {
		var err error
		db, err = brokeroutbox.New(config.Outbox{Name: o.Name, Driver: string(o.Dialect), DSN: o.DSN}, o.StatementTimeout)
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = db.Close() })
	s, err := New(Options{DB: db, Tables: o.Tables, Slots: o.Slots})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func poll(t *testing.T, s *Source) *queue.Snapshot {
	t.Helper()
	snap, err := s.Poll(t.Context())
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	return snap
}

func table(t *testing.T, snap *queue.Snapshot, name string) queue.OutboxTable {
	t.Helper()
	for _, ot := range snap.OutboxTables {
		if ot.Table == name {
			return ot
		}
	}
	t.Fatalf("table %s not in snapshot %+v", name, snap.OutboxTables)
	return queue.OutboxTable{}
}

// wantAge checks an oldest-pending age against the seconds a test wrote
// into created_at, allowing for the time the test itself took.
func wantAge(t *testing.T, got time.Duration, seconds float64) {
	t.Helper()
	if math.Abs(got.Seconds()-seconds) > 3 {
		t.Errorf("oldest pending age = %s, want about %.0fs", got, seconds)
	}
}

// wantPublished checks the rows a publish rate implies: rate × the time
// between the two polls, which lies between the bounds the test measured.
func wantPublished(t *testing.T, ot queue.OutboxTable, rows float64, minGap, maxGap time.Duration) {
	t.Helper()
	if !ot.HasPublishRate {
		t.Fatalf("no publish rate on the second poll")
	}
	lo, hi := ot.PublishRate*minGap.Seconds(), ot.PublishRate*maxGap.Seconds()
	if rows == 0 {
		if ot.PublishRate != 0 {
			t.Errorf("publish rate = %g, want 0", ot.PublishRate)
		}
		return
	}
	if lo > rows+1e-9 || hi < rows-1e-9 {
		t.Errorf("publish rate %g rows/s over a gap of %s..%s implies %.2f..%.2f rows, want %g", ot.PublishRate, minGap, maxGap, lo, hi, rows)
	}
}
