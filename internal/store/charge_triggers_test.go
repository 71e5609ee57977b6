package store_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

// The charge trigger skips the statuses that cannot change a message's
// charge (counts.sql). Each step keeps one status of message 1 and then
// the kept charges must still equal a recount from the view, whether the
// trigger ran or not: out of order, across days, with and without pricing.
func TestChargeTriggerSkipsOnlyWhatChangesNothing(t *testing.T) {
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "charges.db"), driver.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db := st.Reader() // a back door: the steps write what the applier's keeps would
	const day = int64(86_400_000_000_000)
	for _, q := range []string{
		`INSERT INTO campaigns (id, name, fingerprint, source, kind, created_at) VALUES (1, 'c', 'f', 's', 'template', 0)`,
		`INSERT INTO messages (id, campaign_id, line, input, phone) VALUES (1, 1, 2, 'x', '+441234'), (2, 1, 3, 'y', '+15550')`,
		`INSERT INTO message_counts (campaign_id, account_id, state, n) VALUES (1, 0, 'pending', 2)`,
		`INSERT INTO cost_counts (campaign_id, prefix, n) VALUES (1, '+4412', 1), (1, '+1555', 1)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	steps := []struct {
		name, wamid, status string
		at                  int64
		pricing, typ        string
		want                string // message 1's charge after the step: day/category/type, or "none"
	}{
		{"sent with pricing before any delivery: no charge", "w1", "sent", 20_001*day + 5, "marketing", "regular", "none"},
		{"read without pricing: the first delivery", "w1", "read", 20_001*day + 9, "", "", "20001/marketing/regular"},
		{"delivered without pricing, earlier the same day", "w1", "delivered", 20_001*day + 7, "", "", "20001/marketing/regular"},
		{"a second wamid's read without pricing, a day earlier", "w2", "read", 20_000*day + 1, "", "", "20000/marketing/regular"},
		{"a second wamid's delivered without pricing, later", "w2", "delivered", 20_002 * day, "", "", "20000/marketing/regular"},
		{"a late sent with newer pricing", "w2", "sent", 20_003 * day, "utility", "regular", "20000/utility/regular"},
		{"a failed with pricing, older", "w3", "failed", 19_000 * day, "authentication", "free_entry_point", "20000/utility/regular"},
	}
	for _, s := range steps {
		if _, err := db.Exec(`INSERT INTO message_statuses (wamid, status, at, message_id, pricing, pricing_type, received_at)
			VALUES (?, ?, ?, 1, ?, ?, 0)`, s.wamid, s.status, s.at, s.pricing, s.typ); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if err := storetest.CheckCounts(t.Context(), db); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got := "none"
		var (
			d          int64
			cat, ptype string
		)
		if err := db.QueryRow(`SELECT day, category, pricing_type FROM message_charges WHERE message_id = 1`).Scan(&d, &cat, &ptype); err == nil {
			got = fmt.Sprintf("%d/%s/%s", d, cat, ptype)
		}
		if got != s.want {
			t.Errorf("%s: charge %s, want %s", s.name, got, s.want)
		}
	}
}
