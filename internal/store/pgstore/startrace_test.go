package pgstore_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/store/pgstore"
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
	dsn := newDB(t)
	clk := storetest.NewClock()
	st, err := pgstore.Open(ctx, dsn, pgstore.Options{Now: clk.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := storetest.MustCampaign(t, st, "race", 1)
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
	for deadline := time.Now().Add(20 * time.Second); ; {
		var waiting int
		if err := st.Reader().QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the rescue did not wait for the start: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the rescue never waited on the start's lock")
		}
		time.Sleep(10 * time.Millisecond) // polling for a lock wait, not a rate
	}
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
