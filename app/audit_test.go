package app

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/queuewatch/queuewatch/config"
	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestCheckAudit: check names the audit store and says whether it
// answers: a fresh PostgreSQL database is reachable with no schema yet,
// then at the latest version once a replica opened it; a wrong password
// fails check, naming the store without its password; SQLite names its
// file in data_dir.
func TestCheckAudit(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := testConfig(t, config.Kafka{Name: "prod", Brokers: c.ListenAddrs()})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	check := func() (string, error) {
		var out bytes.Buffer
		err := Check(t.Context(), cfg, &out, nil)
		return out.String(), err
	}
	if out, err := check(); err != nil || !strings.Contains(out, "ok   audit: sqlite "+cfg.DataDir) {
		t.Fatalf("sqlite: %v\n%s", err, out)
	}

	db := testenv.Postgres(t)
	cfg.Audit = config.Audit{Driver: config.AuditPostgres, DSN: db.DSN, LeaseTTL: config.DefaultAuditLeaseTTL}
	where := "postgres 127.0.0.1:5432/" + db.Name
	if out, err := check(); err != nil || !strings.Contains(out, "ok   audit: "+where+" (reachable, no schema yet") {
		t.Fatalf("fresh postgres: %v\n%s", err, out)
	}
	s, err := openAudit(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	out, err := check()
	var v, latest int
	_, _ = fmt.Sscanf(out[strings.Index(out, "audit: ")+len("audit: "+where):], " (reachable, schema version %d of %d)", &v, &latest)
	if err != nil || v < 7 || v != latest {
		t.Fatalf("migrated postgres: %v\n%s", err, out)
	}
	cfg.Audit.DSN = strings.Replace(db.DSN, "queuewatch:queuewatch@", "queuewatch:wrong-pw@", 1)
	out, err = check()
	if err == nil || !strings.Contains(out, "FAIL audit: "+where+": unreachable") || strings.Contains(out+err.Error(), "wrong-pw") {
		t.Fatalf("wrong password: %v\n%s", err, out)
	}
}
