package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
)

// Reads only the store's tests make.

// CampaignByFingerprint finds the campaign made from the same file and spec.
func (s *Store) CampaignByFingerprint(ctx context.Context, fp string) (campaign.Campaign, error) {
	c, err := scanCampaign(s.db.QueryRowContext(ctx, `SELECT `+campaignCols+` FROM campaigns WHERE fingerprint = ?`, fp))
	if errors.Is(err, sql.ErrNoRows) {
		return c, campaign.ErrNotFound
	}
	return c, err
}

// PendingRefunds counts the refunds not yet given back to the shared
// limits.
func (s *Store) PendingRefunds(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM gate_refunds`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count queued refunds: %w", err)
	}
	return n, nil
}

// IsSuppressed reports whether phone (E.164) is listed, and why.
func (s *Store) IsSuppressed(ctx context.Context, phone string) (reason string, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT reason FROM suppressions WHERE phone = ?`, phone).Scan(&reason)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("check suppression of %s: %w", phone, err)
	}
	return reason, true, nil
}

// SetCampaignState sets a campaign's state outside the state machine, as
// storetest.SetCampaignState does (which this package's own tests cannot
// import: storetest imports the store for its conformance suite).
func (s *Store) SetCampaignState(ctx context.Context, id int64, st campaign.CampaignState, reason string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE campaigns SET state = ?, pause_reason = ? WHERE id = ?`, string(st), reason, id)
	if err != nil {
		return fmt.Errorf("set campaign %d %s: %w", id, st, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	}
	return nil
}

func testCampaign(fp string) campaign.Campaign {
	return campaign.Campaign{
		Name: "spring", Fingerprint: fp, Source: "spring.csv",
		Spec: campaign.Spec{Kind: campaign.KindText, Text: "Hi {{name}}"},
	}
}

// claimStep is one Claim at a named instant: either an account is charged,
// or Claim waits for a reason until an instant (zero: no known instant).
type claimStep struct {
	at          time.Duration
	resetQuota  bool // a forced ResetQuota of every account first
	wantAccount string
	wantWait    campaign.WaitReason
	wantUntil   time.Duration // offset from t0; 0 means the zero time
}

func runClaims(t *testing.T, st *Store, clk *clock.Sim, id int64, steps []claimStep) []campaign.Claim {
	t.Helper()
	var claims []campaign.Claim
	for i, s := range steps {
		clk.Set(at(s.at))
		if s.resetQuota {
			if _, err := st.ResetQuota(t.Context(), nil, true); err != nil {
				t.Fatal(err)
			}
		}
		c, err := st.Claim(t.Context(), id, "r1", at(s.at))
		if s.wantWait != "" {
			var we *campaign.WaitError
			if !errors.As(err, &we) {
				t.Fatalf("step %d (+%v): Claim = %s, %v; want wait %s", i, s.at, c.Account.Name, err, s.wantWait)
			}
			want := time.Time{}
			if s.wantUntil != 0 {
				want = at(s.wantUntil)
			}
			if we.Reason != s.wantWait || !we.Until.Equal(want) {
				t.Fatalf("step %d (+%v): wait %s until %v, want %s until %v", i, s.at, we.Reason, we.Until, s.wantWait, want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d (+%v): %v, want a claim on %s", i, s.at, err, s.wantAccount)
		}
		if c.Account.Name != s.wantAccount {
			t.Fatalf("step %d (+%v): claimed on %s, want %s", i, s.at, c.Account.Name, s.wantAccount)
		}
		if c.Message.State != campaign.Sending || !c.At.Equal(at(s.at)) {
			t.Errorf("step %d: claim %+v", i, c)
		}
		claims = append(claims, c)
	}
	return claims
}

type messageRow struct {
	state    string
	wamid    sql.NullString
	next     int64
	attempts int
	retries  int
	errCode  sql.NullInt64
}

func readMessage(t *testing.T, st *Store, id int64) messageRow {
	t.Helper()
	var m messageRow
	err := st.db.QueryRowContext(t.Context(), `SELECT state, wamid, next_attempt_at, attempts, retries, error_code FROM messages WHERE id = ?`, id).
		Scan(&m.state, &m.wamid, &m.next, &m.attempts, &m.retries, &m.errCode)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustClaim(t *testing.T, st *Store, id int64, runner string, now time.Time) campaign.Claim {
	t.Helper()
	c, err := st.Claim(t.Context(), id, runner, now)
	if err != nil {
		t.Fatalf("claim at +%v: %v", now.Sub(t0), err)
	}
	return c
}

// Claim and Record are the one-message forms of ClaimN and RecordAll that
// the store's own tests use.

// Claim takes the next due message of a campaign for runner, together with
// one token from the chosen account's bucket (and the global bucket when it
// is on) and one unit of that account's daily quota — all in one
// transaction, so no other process can spend the same token or quota.
//
// When nothing can be sent now it returns a *campaign.WaitError saying why
// and until when; campaign.ErrDone when no row is open; campaign.ErrPaused
// when the campaign is paused.
func (s *Store) Claim(ctx context.Context, campaignID int64, runner string, now time.Time) (campaign.Claim, error) {
	cs, err := s.ClaimN(ctx, campaignID, runner, now, 1)
	if err != nil {
		return campaign.Claim{}, err
	}
	return cs[0], nil
}

// Record stores what became of a claimed message. A sent outcome is always
// kept, even if the row was meanwhile declared unknown: the wamid is the
// truth. Other outcomes apply only while the row is still this claim's.
func (s *Store) Record(ctx context.Context, c campaign.Claim, runner string, o campaign.Outcome, now time.Time) error {
	return s.RecordAll(ctx, runner, []campaign.Result{{Claim: c, Outcome: o, At: now}})
}

func mustSent(t *testing.T, st *Store, c campaign.Claim) {
	t.Helper()
	if err := st.Record(t.Context(), c, "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1", Class: "ok"}, c.At); err != nil {
		t.Fatal(err)
	}
}
