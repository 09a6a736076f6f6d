package nats

import (
	"errors"
	"testing"

	"github.com/queuewatch/queuewatch/offsets"
)

// A name that would break or widen the API subject is a scope error (400),
// never sent to the server.
func TestParseGroupRefusesSubjectBreakingNames(t *testing.T) {
	for _, g := range []string{
		"ORDERS", "/billing", "ORDERS/", "OR.DERS/billing", "ORDERS/bil ling",
		"ORDERS/a*", "ORDERS/>", "ORD\nERS/billing", "ORDERS/bill\\ing", "ORDERS/\xff", "ORDERS/a/b",
	} {
		if _, _, err := ParseGroup(g); !errors.Is(err, offsets.ErrScope) {
			t.Errorf("ParseGroup(%q) = %v, want a scope error", g, err)
		}
	}
	s, c, err := ParseGroup("ORDERS/billing-ü")
	if err != nil || s != "ORDERS" || c != "billing-ü" {
		t.Fatalf("ParseGroup(ORDERS/billing-ü) = %q, %q, %v", s, c, err)
	}
}
