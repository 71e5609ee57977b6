package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/store/pgstore"
	"github.com/wasend/wasend/internal/store/storetest"
)

// t0 is when the claims of this file's tests happen.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// openAt is a fresh database and a store on it whose clock stands at now.
func openAt(t *testing.T, now time.Time) (db string, st *pgstore.Store) {
	t.Helper()
	db = newDB(t)
	st, err := pgstore.Open(t.Context(), db, pgstore.Options{Now: func() time.Time { return now }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return db, st
}

// A claim passes over a due row another transaction holds (FOR UPDATE SKIP
// LOCKED) instead of waiting for it, and takes it once it is free.
func TestClaimSkipsLockedRows(t *testing.T) {
	ctx := t.Context()
	db, st := openAt(t, t0)
	storetest.MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := storetest.MustCampaign(t, st, "locked", 3)

	holder, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(context.Background())
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var held int64
	if err := tx.QueryRow(ctx, `SELECT id FROM messages WHERE campaign_id = $1 ORDER BY id LIMIT 1 FOR UPDATE`, c.ID).Scan(&held); err != nil {
		t.Fatal(err)
	}

	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	l := claim.New(st)
	cs, err := l.ClaimN(wait, c.ID, "r", t0, 3)
	if err != nil {
		t.Fatalf("claim beside a held row: %v", err)
	}
	if len(cs) != 2 {
		t.Fatalf("claimed %d rows, want the 2 not held", len(cs))
	}
	for _, cl := range cs {
		if cl.Message.ID == held {
			t.Errorf("claimed row %d, which another transaction holds", held)
		}
	}

	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	cs, err = l.ClaimN(wait, c.ID, "r", t0, 3)
	if err != nil || len(cs) != 1 || cs[0].Message.ID != held {
		t.Fatalf("claim once it is free = %d rows, %v; want row %d", len(cs), err, held)
	}
}

// A new attempt's trigger (attempt_rollup_insert) reads only its own
// message's attempts, however the table grew since the session planned it:
// planned on a new database's empty attempts (autovacuum had not analyzed
// it), it walked the primary key or the account's index backwards for the
// attempt before each, every attempt reading every earlier one (pg
// migration 0015).
func TestAttemptReadsOnlyItsMessagesAttempts(t *testing.T) {
	ctx := t.Context()
	db, st := openAt(t, t0)
	for _, name := range []string{"a", "b", "c"} {
		storetest.MustAccount(t, st, name, campaign.TierActive, campaign.Overrides{})
	}
	const rows, batch = 3000, 100
	c := storetest.MustCampaign(t, st, "many", rows)

	// One session, as a host's: its first attempts plan the trigger's
	// reads on the empty table, the rest grow it.
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	attempt := func(q pgx.Tx, from int) {
		t.Helper()
		if _, err := q.Exec(ctx, `INSERT INTO attempts (message_id, account_id, claimed_at)
			SELECT m.id, (SELECT a.id FROM accounts a ORDER BY a.id OFFSET m.id % 3 LIMIT 1), $2
			FROM messages m WHERE m.campaign_id = $1 ORDER BY m.id OFFSET $3 LIMIT $4`,
			c.ID, t0.UnixNano(), from, batch); err != nil {
			t.Fatal(err)
		}
	}
	for from := 0; from < rows-batch; from += batch {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		attempt(tx, from)
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The last rows' attempts and what reading attempts cost them, in one
	// transaction: pg_stat_xact_user_tables counts this transaction's reads.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	attempt(tx, rows-batch)
	var read int64
	if err := tx.QueryRow(ctx, `SELECT seq_tup_read + idx_tup_fetch FROM pg_stat_xact_user_tables
		WHERE relname = 'attempts'`).Scan(&read); err != nil {
		t.Fatal(err)
	}
	// Each new attempt may read its message's attempts, twice (the one
	// before it of its message, of its message and account): only itself
	// here, where 0015's index reads none.
	if read > 2*batch {
		t.Errorf("%d attempts read %d rows of attempts, beside %d others: want at most %d", batch, read, rows-batch, 2*batch)
	}
}
