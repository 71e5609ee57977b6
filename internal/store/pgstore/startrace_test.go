package pgstore_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/store/storetest"
)

// TestRescueWaitsForAStart: a rescue that finds a row's lease run out
// while its runner's start mark (on the claim's attempt, not the messages
// row) is not yet committed waits for it and reads it: the row becomes
// unknown, its request may have reached the API, never pending. (Read
// without the attempt's lock, the mark was not seen: the row went back to
// pending, to be sent twice.)
func TestRescueWaitsForAStart(t *testing.T) {
	ctx := t.Context()
	dsn, st, c := openCampaign(t, "race", 1)
	cs, err := claim.New(st).ClaimN(ctx, c.ID, "r", storetest.T0, 1)
	if err != nil || len(cs) != 1 {
		t.Fatalf("claim: %d rows, %v; want 1", len(cs), err)
	}

	runner, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close(ctx)
	tx, err := runner.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// A back door: the mark a Start writes, not yet committed.
	if _, err := tx.Exec(ctx, `UPDATE attempts SET started = 1 WHERE id = $1`, cs[0].AttemptID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := st.Rescue(ctx, c.ID, storetest.T0.Add(time.Hour), func(campaign.Runner) bool { return true })
		done <- err
	}()
	waitForLockWait(t, st, `true`, done)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var state string
	if err := st.Reader().QueryRowContext(ctx, `SELECT state FROM messages WHERE id = $1`, cs[0].Message.ID).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != string(campaign.Unknown) {
		t.Errorf("the row whose start committed while the rescue waited is %s, want unknown", state)
	}
}
