package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// Reads only the store's tests make.

// CampaignByFingerprint finds the campaign made from the same file and spec.
func (s *Store) CampaignByFingerprint(ctx context.Context, fp string) (campaign.Campaign, error) {
	c, err := rowscan.Campaign(s.db.QueryRowContext(ctx, `SELECT `+rowscan.CampaignCols+` FROM campaigns WHERE fingerprint = ?`, fp))
	if errors.Is(err, sql.ErrNoRows) {
		return c, campaign.ErrNotFound
	}
	return c, err
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

func testCampaign(fp string) campaign.Campaign {
	return campaign.Campaign{
		Name: "spring", Fingerprint: fp, Source: "spring.csv",
		Spec: campaign.Spec{Kind: campaign.KindText, Text: "Hi {{name}}"},
	}
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
