package pgstore_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/storetest"
)

// TestSetBudgetRecountWaitsForAMove: a run's start recounts what its
// campaign has committed while another transaction, which does not take
// the claim lock (a rescue, a webhook), has moved a priced row out of the
// counted states and not yet committed. The recount waits for it and reads
// what it committed: the move's change is neither lost nor counted twice.
// (A recount in the statement that waits for the row, one upsert, reads
// before the move and writes after it: the move is lost.)
func TestSetBudgetRecountWaitsForAMove(t *testing.T) {
	ctx := t.Context()
	dsn, st, c := openCampaign(t, "move", 3)
	price := func(string) pricing.Micros { return 1000 }
	if err := st.SetBudget(ctx, c.ID, 1_000_000, "USD", price); err != nil {
		t.Fatal(err)
	}
	cs, err := claim.New(st).ClaimN(ctx, c.ID, "r", storetest.T0, 3)
	if err != nil || len(cs) != 3 {
		t.Fatalf("claim: %d rows, %v; want 3", len(cs), err)
	}

	mover, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer mover.Close(ctx)
	tx, err := mover.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// A back door: the move a rescue makes of a row never started.
	if _, err := tx.Exec(ctx, `UPDATE messages SET state = 'pending' WHERE id = $1`, cs[0].Message.ID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- st.SetBudget(ctx, c.ID, 1_000_000, "USD", price) }()
	// The start waits on a lock the move holds.
	waitForLockWait(t, st, `query LIKE '%campaign_spend%'`, done)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b, err := readmodel.New(st).CampaignBudget(ctx, c.ID)
	if err != nil || b.Committed != 2000 {
		t.Errorf("committed = %v, %v; want 0.002 (2 rows in flight, the third moved back)", b.Committed, err)
	}
}
