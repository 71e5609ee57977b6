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

// claimLock is pgstore's (tx.go): the lock every sending transaction takes
// first.
const claimLock = 0x7761_7365_6e64_01

// TestClaimSessionEndedWhileWaiting: a claim whose session the server ends
// while it waits for the claim lock (pg_terminate_backend; a host stopped
// inside its transaction is ended so by idle_in_transaction_session_timeout)
// runs again on a new session and claims, once: the ended transaction
// never committed. (Found by the host-kill torture on Postgres: the host
// exited, its rows left pending.) The conformance case "sessions ended by
// the server" holds the sessions ended between calls.
func TestClaimSessionEndedWhileWaiting(t *testing.T) {
	ctx := t.Context()
	dsn := newDB(t)
	st, err := pgstore.Open(ctx, dsn, pgstore.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	storetest.MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := storetest.MustCampaign(t, st, "ended", 2)
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	if err := st.RegisterRunner(ctx, campaign.Runner{ID: "r", CampaignID: c.ID, Host: "h", PID: 42, StartedAt: now, HeartbeatAt: now}); err != nil {
		t.Fatal(err)
	}

	holder, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(context.Background())
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(claimLock)); err != nil {
		t.Fatal(err)
	}
	type result struct {
		claims []campaign.Claim
		err    error
	}
	done := make(chan result, 1)
	go func() {
		cs, err := claim.New(st).ClaimN(ctx, c.ID, "r", now, 1)
		done <- result{cs, err}
	}()
	// The claim's session waits for the lock: end it from the server.
	var ended bool
	for deadline := time.Now().Add(30 * time.Second); !ended; {
		if time.Now().After(deadline) {
			t.Fatal("no session waited for the claim lock within 30 s")
		}
		err := holder.QueryRow(ctx, `SELECT coalesce(bool_or(pg_terminate_backend(pid, 10000)), false) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`).Scan(&ended)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond) // waiting for another session to block, not for a rate
	}
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_unlock($1)`, int64(claimLock)); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("the claim whose session was ended while it waited: %v", r.err)
	}
	if len(r.claims) != 1 {
		t.Fatalf("%d rows claimed, want 1", len(r.claims))
	}
	var sending, attempts int
	if err := holder.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'sending'), (SELECT count(*) FROM attempts) FROM messages`).
		Scan(&sending, &attempts); err != nil {
		t.Fatal(err)
	}
	if sending != 1 || attempts != 1 {
		t.Errorf("%d rows sending and %d attempts after one claim, want 1 and 1", sending, attempts)
	}
}
