package outbox

import (
	"testing"

	"github.com/queuewatch/queuewatch/internal/testenv"
)

// TestPostgresMissingSlotLagUnknown: a configured slot that does not
// exist has an error and an unknown lag, never a lag of 0.
func TestPostgresMissingSlotLagUnknown(t *testing.T) {
	db := testenv.Postgres(t)
	s := newSource(t, testSource{Name: "orders-db", Dialect: Postgres, DSN: db.DSN, Slots: []string{"no_such_slot"}})
	miss := poll(t, s).Slots[0]
	if miss.Err != "no replication slot named no_such_slot" || miss.LagUnknown == "" {
		t.Errorf("missing slot: %+v, want its error and an unknown lag", miss)
	}
}
