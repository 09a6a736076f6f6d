package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/queue"
)

// everyBroker is a config naming one cluster of every registered broker.
// A new broker adds its cluster here, or TestRegistrationPoints fails:
// the registration's hooks are only tested over a configured cluster.
func everyBroker(t *testing.T) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Kafka = []config.Kafka{{Name: "k1", Brokers: []string{"127.0.0.1:1"}}}
	cfg.RabbitMQ = []config.RabbitMQ{{Name: "r1", URL: "amqp://guest:guest@127.0.0.1:1/"}}
	cfg.NATS = []config.NATS{{Name: "n1", URL: "nats://127.0.0.1:1"}}
	cfg.SQS = []config.SQS{{Name: "s1", Region: "eu-west-1", Endpoint: "http://127.0.0.1:1"}}
	cfg.Kinesis = []config.Kinesis{{Name: "k1", Region: "eu-west-1", Endpoint: "http://127.0.0.1:1"}}
	cfg.PubSub = []config.PubSub{{Name: "p1", Project: "queuewatch-test", Endpoint: "127.0.0.1:1"}}
	cfg.Outbox = []config.Outbox{{
		Name: "o1", Driver: config.OutboxPostgres, DSN: "postgres://qw@127.0.0.1:1/shop",
		Tables: []config.OutboxTable{{Table: "outbox", CreatedAt: "created_at", Pending: "sent_at IS NULL"}},
	}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestRegistrationPoints lists what a broker registers in app, so a new
// broker that forgets one fails here: a name its sources answer to, a
// config section, an access builder (open) that builds a source per
// configured cluster and a replay backend per cluster (or says it has
// none), and check's ok line. Every queue.Broker constant has a
// registration. Nothing here dials a broker: building is I/O-free.
func TestRegistrationPoints(t *testing.T) {
	cfg := everyBroker(t)
	log := slog.New(slog.DiscardHandler)
	seen := map[queue.Broker]bool{}
	for _, b := range registry {
		t.Run(string(b.name), func(t *testing.T) {
			if b.name == "" || seen[b.name] {
				t.Fatalf("registration %q: empty or registered twice", b.name)
			}
			seen[b.name] = true
			if b.section == nil || b.open == nil || b.check.summary == nil {
				t.Fatalf("%s: registers no config section, access builder or check summary", b.name)
			}
			clusters := b.section(cfg)
			if len(clusters) == 0 {
				t.Fatalf("%s: the test config names none of its clusters; add one to everyBroker", b.name)
			}
			w, err := b.open(cfg)
			if err != nil {
				t.Fatalf("%s: open: %v", b.name, err)
			}
			if w.sources == nil {
				t.Fatalf("%s: no source builder", b.name)
			}
			sources, closeSources, err := w.sources(log)
			if err != nil {
				t.Fatalf("%s: sources: %v", b.name, err)
			}
			defer closeSources()
			var got []string
			for _, s := range sources {
				if s.Broker() != b.name {
					t.Errorf("%s: a source answers Broker() %s", b.name, s.Broker())
				}
				got = append(got, s.Cluster())
			}
			if !slices.Equal(got, clusters) {
				t.Errorf("%s: sources for clusters %q, config section names %q", b.name, got, clusters)
			}
			switch {
			case b.noReplay && w.backends != nil:
				t.Errorf("%s: declares no replay but builds backends", b.name)
			case !b.noReplay && w.backends == nil:
				t.Errorf("%s: no replay backend builder (set noReplay if it has none)", b.name)
			case w.backends != nil:
				backends, err := w.backends(log)
				if err != nil {
					t.Fatalf("%s: backends: %v", b.name, err)
				}
				defer closeBackends(backends)
				if len(backends) != len(clusters) {
					t.Errorf("%s: %d replay backends for %d clusters", b.name, len(backends), len(clusters))
				}
			}
			if _, ok := registration(b.name); !ok {
				t.Errorf("registration(%s) finds nothing", b.name)
			}
		})
	}
	for _, name := range brokerConstants(t) {
		if !seen[name] {
			t.Errorf("queue.Broker %q has no registration in app's registry", name)
		}
	}
}

// brokerConstants reads the values of the queue.Broker constants from the
// queue package's source, so that a new constant needs a registration
// without anyone listing it here.
func brokerConstants(t *testing.T) []queue.Broker {
	t.Helper()
	files, err := filepath.Glob("../queue/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []queue.Broker
	fset := token.NewFileSet()
	for _, f := range files {
		if filepath.Ext(f) != ".go" || len(f) > 8 && f[len(f)-8:] == "_test.go" {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Broker" {
					continue
				}
				for _, val := range v.Values {
					lit, ok := val.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: a queue.Broker constant that is not a string literal", f)
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, queue.Broker(s))
				}
			}
		}
	}
	if len(out) < 4 {
		t.Fatalf("found %d queue.Broker constants (%q); the parse missed some", len(out), out)
	}
	return out
}
