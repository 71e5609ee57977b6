package store

import (
	"slices"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
)

func TestIsSuppressed(t *testing.T) {
	st := openTest(t, newFakeClock())
	if _, err := st.Suppress(t.Context(), []campaign.Suppression{{Phone: phone(1), Reason: "STOP"}, {Phone: phone(2)}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		phone      string
		wantReason string
		wantOK     bool
	}{
		{phone(1), "STOP", true},
		{phone(2), "", true},
		{phone(3), "", false},
		{"015100000001", "", false}, // the list holds E.164 only
	} {
		reason, ok, err := st.IsSuppressed(t.Context(), c.phone)
		if err != nil || reason != c.wantReason || ok != c.wantOK {
			t.Errorf("IsSuppressed(%s) = %q, %v, %v; want %q, %v", c.phone, reason, ok, err, c.wantReason, c.wantOK)
		}
	}
}

// pending is the outbox of numbers to push, as "phone if-unknown" lines,
// oldest first.
func pending(t *testing.T, st *Store) []string {
	t.Helper()
	list, err := st.ToPush(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list {
		s := p.Phone
		if p.IfUnknown {
			s += " if-unknown"
		}
		out = append(out, s)
	}
	return out
}

// Migration 0021: numbers listed before it go up only where the shared
// list never knew them: they can no longer be told from copies of it.
func TestSuppressionOutboxMigration(t *testing.T) {
	path, db, exec := oldDatabase(t, "0021")
	exec(`INSERT INTO suppressions (phone, reason, created_at) VALUES (?, 'later', 2), (?, 'earlier', 1)`, phone(2), phone(1))
	db.Close()
	st := openAt(t, path, newFakeClock())
	if got, want := pending(t, st), []string{phone(1) + " if-unknown", phone(2) + " if-unknown"}; !slices.Equal(got, want) {
		t.Errorf("outbox after migration 0021: %q, want %q", got, want)
	}
}
