package store

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// RecordAll stores plain sent outcomes in bulk: the result must be what
// record, row by row, stores — for batches of every padded size, sent
// outcomes mixed with others, and rows that stopped being ours (recovered
// as unknown by another runner, or already sent).
func TestRecordAllMatchesRecord(t *testing.T) {
	for _, n := range []int{1, 7, 8, 9, 33, 600} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			results := func(st *Store) []campaign.Result {
				t.Helper()
				unlimited := campaign.Limits{Rate: 1e6, Burst: 1e6, DailyCap: 1e9}
				if err := st.SetTier(t.Context(), campaign.TierNew, unlimited); err != nil {
					t.Fatal(err)
				}
				if _, err := st.AddAccount(t.Context(), campaign.Account{Name: "a", PhoneNumberID: "1", Tier: campaign.TierNew,
					TokenEnv: "T", ThroughputPinned: campaign.Unlimited}); err != nil {
					t.Fatal(err)
				}
				c := mustCampaign(t, st, "c", n)
				claims, err := st.ClaimN(t.Context(), c.ID, "r1", t0, n)
				if err != nil || len(claims) != n {
					t.Fatalf("ClaimN = %d claims, %v; want %d", len(claims), err, n)
				}
				var rs []campaign.Result
				for i, cl := range claims {
					at := t0.Add(time.Duration(i) * time.Millisecond)
					o := campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprintf("wamid.%d", i), Class: "ok"}
					switch {
					case i%5 == 1:
						o = campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: at.Add(time.Second), Refund: true,
							SpendsRetry: true, ErrorCode: 131000, Error: "boom", Class: "transient"}
					case i%7 == 2:
						o = campaign.Outcome{Kind: campaign.OutcomeFailed, Refund: true, ErrorCode: 131026, Error: "undeliverable", Class: "permanent"}
					}
					rs = append(rs, campaign.Result{Claim: cl, Outcome: o, At: at})
				}
				// Rows no longer ours: one recovered as unknown (a sent
				// answer still counts), one already sent.
				if n > 3 {
					if _, err := st.db.Exec(`UPDATE messages SET state = 'unknown', runner_id = NULL WHERE id = ?`, claims[3].Message.ID); err != nil {
						t.Fatal(err)
					}
					if _, err := st.db.Exec(`UPDATE messages SET state = 'sent', wamid = 'earlier' WHERE id = ?`, claims[0].Message.ID); err != nil {
						t.Fatal(err)
					}
				}
				return rs
			}

			bulk := openTest(t, newFakeClock())
			// The rows no longer ours are refused by their fence, and
			// said to be.
			if err := bulk.RecordAll(t.Context(), "r1", results(bulk)); err != nil && (n <= 3 || !errors.Is(err, campaign.ErrFenced)) {
				t.Fatal(err)
			}
			one := openTest(t, newFakeClock())
			rs := results(one)
			err := one.write(t.Context(), func(tx *Tx) error {
				for _, r := range rs {
					if _, err := record(t.Context(), tx, r.Claim, r.Outcome, r.At); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{
				`SELECT group_concat(id || '|' || state || '|' || coalesce(wamid, '-') || '|' || coalesce(sent_at, '-') || '|' ||
					coalesce(updated_at, '-') || '|' || coalesce(error_code, '-') || '|' || coalesce(error_message, '-') || '|' ||
					retries || '|' || next_attempt_at, ';') FROM (SELECT * FROM messages ORDER BY id)`,
				`SELECT group_concat(id || '|' || message_id || '|' || coalesce(done_at, '-') || '|' || coalesce(outcome, '-') || '|' ||
					coalesce(error_code, '-') || '|' || coalesce(class, '-'), ';') FROM (SELECT * FROM attempts ORDER BY id)`,
				`SELECT group_concat(name || '|' || used_today || '|' || coalesce(last_error_code, '-'), ';') FROM accounts`,
			} {
				var a, b string
				if err := bulk.db.QueryRow(q).Scan(&a); err != nil {
					t.Fatal(err)
				}
				if err := one.db.QueryRow(q).Scan(&b); err != nil {
					t.Fatal(err)
				}
				if a != b {
					t.Errorf("RecordAll stored\n%.400s\nrecord stored\n%.400s", a, b)
				}
			}
			if got := countRows(t, bulk, `SELECT count(*) FROM messages WHERE state = 'sent' AND wamid LIKE 'wamid.%'`); n > 1 && got == 0 {
				t.Errorf("no sent rows: the test lost its subject")
			}
		})
	}
}
