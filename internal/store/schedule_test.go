package store

import (
	"database/sql"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// scheduledCampaign imports n rows with a schedule.
func scheduledCampaign(t *testing.T, st *Store, name string, n int, sc campaign.Schedule) campaign.Campaign {
	t.Helper()
	c := mustCampaign(t, st, name, n)
	if err := st.SetSchedule(t.Context(), c.ID, sc); err != nil {
		t.Fatal(err)
	}
	c, err := st.Campaign(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Migration 0014 widens messages.state in place: rows and columns other
// migrations added stay, and every connection admits 'expired'.
func TestMigrationAdmitsExpired(t *testing.T) {
	path, old, exec := oldDatabase(t, "0014")
	// A column another branch's migration might have added.
	exec(`ALTER TABLE messages ADD COLUMN other TEXT CHECK (other IN ('x', 'y'))`)
	exec(`INSERT INTO campaigns (name, fingerprint, source, kind, text, created_at) VALUES ('c', 'c', 'c.csv', 'text', 'Hi', 0)`)
	exec(`INSERT INTO messages (campaign_id, line, input, phone, state, other) VALUES (1, 2, 'x', '+491511', 'pending', 'y')`)
	if _, err := old.Exec(`UPDATE messages SET state = 'expired'`); err == nil {
		t.Fatal("the old schema admitted 'expired'")
	}
	old.Close()

	st := openAt(t, path, newFakeClock())
	// Several connections at once: each must see the new schema.
	conns := make([]*sql.Conn, 3)
	for i := range conns {
		var err error
		if conns[i], err = st.db.Conn(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close()
	}
	for i, cn := range conns {
		if _, err := cn.ExecContext(t.Context(), `UPDATE messages SET state = 'expired' WHERE id = 1`); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		if _, err := cn.ExecContext(t.Context(), `UPDATE messages SET state = 'pending' WHERE id = 1`); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	if _, err := st.db.Exec(`UPDATE messages SET state = 'bogus'`); err == nil {
		t.Error("the CHECK no longer holds")
	}
	if _, err := st.db.Exec(`UPDATE messages SET other = 'z'`); err == nil {
		t.Error("the other column's CHECK no longer holds")
	}
	var other, check string
	if err := st.db.QueryRow(`SELECT other FROM messages WHERE id = 1`).Scan(&other); err != nil || other != "y" {
		t.Errorf("other column = %q, %v", other, err)
	}
	if err := st.db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v", check, err)
	}
	checkCounts(t, st, "the migration", 1)
}

// Migration 0030: a campaign that began keeps the deadline it was shown;
// one not begun counts from its --at.
func TestMigrationFixesDeadlines(t *testing.T) {
	path, _, exec := oldDatabase(t, "0030")
	h := int64(time.Hour)
	exec(`INSERT INTO campaigns (name, fingerprint, source, kind, text, created_at, start_at, began_at, expire_after)
		VALUES ('began', 'a', 'c.csv', 'text', 'Hi', 0, ?, ?, ?), ('scheduled', 'b', 'c.csv', 'text', 'Hi', 0, ?, NULL, ?),
		('never', 'c', 'c.csv', 'text', 'Hi', 0, ?, ?, 0), ('not begun', 'd', 'c.csv', 'text', 'Hi', 0, NULL, NULL, ?)`,
		t0.UnixNano(), t0.UnixNano()+h, h, t0.UnixNano()+5*h, 2*h, t0.UnixNano(), t0.UnixNano(), h)
	st := openAt(t, path, newFakeClock())
	for id, want := range map[int64]time.Time{1: at(2 * time.Hour), 2: at(7 * time.Hour), 3: {}, 4: {}} {
		c, err := st.Campaign(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !c.ExpiresAt().Equal(want) {
			t.Errorf("campaign %s: expires %v, want %v", c.Name, c.ExpiresAt(), want)
		}
	}
}
