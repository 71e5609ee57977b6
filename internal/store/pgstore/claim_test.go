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

// A claim passes over a due row another transaction holds (FOR UPDATE SKIP
// LOCKED) instead of waiting for it, and takes it once it is free.
func TestClaimSkipsLockedRows(t *testing.T) {
	ctx := t.Context()
	db := newDB(t)
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	st, err := pgstore.Open(ctx, db, pgstore.Options{Now: func() time.Time { return t0 }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
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
