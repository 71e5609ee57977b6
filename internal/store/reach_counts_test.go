package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/claimsql"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/recordsql"
)

// distinct is what the running count stands for, as it was found before
// it: the distinct recipients in the window and the oldest latest send,
// by grouping the whole window.
func distinct(t *testing.T, q querier, members []int64, since time.Time) (n int, oldest time.Time) {
	t.Helper()
	in := "(" + placeholders(len(members)) + ")"
	args := make([]any, 0, len(members)+1)
	for _, id := range members {
		args = append(args, id)
	}
	var at *int64
	if err := q.QueryRowContext(t.Context(), `SELECT count(*), min(latest) FROM (SELECT max(last_at) AS latest
		FROM contact_log WHERE account_id IN `+in+` AND last_at > ? GROUP BY phone)`, append(args, nanos(since))...).Scan(&n, &at); err != nil {
		t.Fatal(err)
	}
	if at == nil {
		return n, time.Time{}
	}
	return n, fromNanos(*at)
}

// The running count answers what count(DISTINCT phone) over the window
// answers, and the oldest recipient what grouping the window finds, at
// every step of random sends on a simulated clock over five days: two
// numbers sharing a portfolio (each sending to recipients the other has,
// at times at the same instant), one on its own, recipients who drift so
// that each leaves the window in time, sends taken back, claims whose
// instant lags the last count's, reads that store nothing (status), moves
// that read nothing (a claim's of a portfolio without a limit) and a
// number that joins the portfolio half-way.
func TestReachCountMatchesDistinctCount(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	ctx := t.Context()
	mustPortfolio(t, st, "acme", 0, 0)
	var ids []int64
	for _, name := range []string{"a", "b", "solo", "late"} {
		ids = append(ids, mustAccount(t, st, name, campaign.TierActive, fast).ID)
	}
	joinPortfolio(t, st, "a", "acme")
	joinPortfolio(t, st, "b", "acme")
	acme, err := portfolioByName(ctx, st.db, "acme")
	if err != nil {
		t.Fatal(err)
	}
	scopes := func() []driver.ReachScope {
		members, err := claimsql.New(sqlTx{st.db}, sqlite).Members(ctx, acme.ID)
		if err != nil {
			t.Fatal(err)
		}
		out := []driver.ReachScope{{Portfolio: acme.ID, Members: members}}
		for _, id := range ids[2:] {
			if !slices.Contains(members, id) {
				out = append(out, driver.ReachScope{Account: id, Members: []int64{id}})
			}
		}
		return out
	}

	rng := rand.New(rand.NewPCG(25, 40))
	now := t0
	var logged []campaign.Claim // sends that may be taken back
	rebuilt := -1
	for step := range 3000 {
		now = now.Add(time.Duration(rng.IntN(int(6 * time.Minute))))
		if step == 1500 {
			joinPortfolio(t, st, "late", "acme")
			rebuilt = countRows(t, st, `SELECT count(*) FROM reach_counts`)
		}
		err := st.write(ctx, func(tx *Tx) error {
			ct := newClaimTx(tx)
			var cs []campaign.Claim
			for range 1 + rng.IntN(8) {
				a := campaign.Account{ID: ids[rng.IntN(len(ids))]}
				cs = append(cs, campaign.Claim{Account: a, At: now,
					Message: campaign.Message{Phone: fmt.Sprintf("+49151%04d", step/20+rng.IntN(20))}})
			}
			if err := ct.LogContacts(ctx, cs); err != nil {
				return err
			}
			logged = append(logged, cs...)
			if rng.IntN(5) == 0 {
				c := logged[rng.IntN(len(logged))]
				if err := recordsql.UnlogContact(ctx, recordTx{sqlTx{tx}, tx}, sqlite, c); err != nil {
					return err
				}
			}
			if rng.IntN(40) == 0 { // an entry gone (nothing deletes one today; its trigger is held all the same)
				c := logged[rng.IntN(len(logged))]
				if _, err := tx.ExecContext(ctx, `DELETE FROM contact_log WHERE phone = ? AND account_id = ?`, c.Message.Phone, c.Account.ID); err != nil {
					return err
				}
			}
			for _, s := range scopes() {
				// A claim's instant may lag the count's (taken before
				// another process's claim committed), here by minutes.
				at := now.Add(-time.Duration(rng.IntN(int(5 * time.Minute))))
				since := at.Add(-ratelimit.ReachWindow)
				want, wantOldest := distinct(t, tx, s.Members, since)
				read := ct.ReachCount
				switch rng.IntN(3) {
				case 0:
					read = ct.PeekReach // a status's read, storing nothing
				case 1:
					// A claim that only moves the count (a portfolio
					// without a limit): a read then finds what it stored.
					read = func(ctx context.Context, s driver.ReachScope, since time.Time) (int, error) {
						if err := ct.KeepReach(ctx, s, since); err != nil {
							return 0, err
						}
						return ct.PeekReach(ctx, s, since)
					}
				}
				got, err := read(ctx, s, since)
				if err != nil {
					return err
				}
				if got != want {
					return fmt.Errorf("step %d, scope %+v at %v: running count %d, distinct count %d", step, s, at, got, want)
				}
				oldest, err := ct.ReachOldest(ctx, s.Members, since)
				if err != nil {
					return err
				}
				if !oldest.Equal(wantOldest) {
					return fmt.Errorf("step %d, scope %+v: oldest %v, grouped %v", step, s, oldest, wantOldest)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if days := now.Sub(t0).Hours() / 24; days < 4 {
		t.Fatalf("the sends span %.1f days, want several", days)
	}
	// The counts were forgotten when "late" joined (then built again at
	// the next read), and are kept rows, not recounts.
	if end := countRows(t, st, `SELECT count(*) FROM reach_counts`); rebuilt != 0 || end != 2 {
		t.Errorf("reach_counts rows: %d after the join, %d at the end; want 0 then 2", rebuilt, end)
	}
}

// A send log from before the running counts (an upgraded database): the
// first status builds each portfolio's count from the log and stores it;
// the next reads it, moved on by the sends that left the window.
func TestPortfoliosBuildTheReachCountOnce(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	ctx := t.Context()
	mustPortfolio(t, st, "acme", 0, 0)
	for _, name := range []string{"a", "b"} {
		mustAccount(t, st, name, campaign.TierActive, fast)
		joinPortfolio(t, st, name, "acme")
	}
	// Three recipients: +1 by both numbers, +2 an hour in, +3 by b alone.
	if _, err := st.db.ExecContext(ctx, `INSERT INTO contact_log (phone, account_id, last_at) VALUES
		('+1', 1, ?), ('+1', 2, ?), ('+2', 1, ?), ('+3', 2, ?)`,
		nanos(t0), nanos(t0.Add(time.Minute)), nanos(t0.Add(time.Hour)), nanos(t0.Add(2*time.Hour))); err != nil {
		t.Fatal(err)
	}
	used := func() int {
		t.Helper()
		ps, err := st.Portfolios(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.Name == "acme" {
				return p.Used
			}
		}
		t.Fatal("no portfolio acme")
		return 0
	}
	for _, step := range []struct {
		at   time.Duration // after t0
		want int
	}{
		{3 * time.Hour, 3},
		{ratelimit.ReachWindow + 30*time.Second, 3}, // +1's latest is a minute in
		{ratelimit.ReachWindow + 2*time.Minute, 2},
		{ratelimit.ReachWindow + 90*time.Minute, 1},
		{ratelimit.ReachWindow + 3*time.Hour, 0},
	} {
		clk.Set(t0.Add(step.at))
		if got := used(); got != step.want {
			t.Errorf("at t0+%v: used %d, want %d", step.at, got, step.want)
		}
		if n := countRows(t, st, `SELECT count(*) FROM reach_counts`); n != 1 {
			t.Errorf("at t0+%v: %d running counts stored, want acme's", step.at, n)
		}
	}
}

// A reader that finds the running count more than a minute behind stores
// it moved on, so that the status of a portfolio whose claims stopped does
// not read again every send that left the window since; within the minute
// it reads without writing.
func TestReadersMoveAnIdleReachCount(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	ctx := t.Context()
	mustPortfolio(t, st, "acme", 0, 0)
	mustAccount(t, st, "a", campaign.TierActive, fast)
	joinPortfolio(t, st, "a", "acme")
	if _, err := st.db.ExecContext(ctx, `INSERT INTO contact_log (phone, account_id, last_at) VALUES ('+1', 1, ?)`, nanos(t0)); err != nil {
		t.Fatal(err)
	}
	through := func() time.Time {
		t.Helper()
		var n int64
		if err := st.db.QueryRowContext(ctx, `SELECT through FROM reach_counts`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return fromNanos(n)
	}
	for _, step := range []struct {
		at, through time.Duration // after t0
	}{
		{time.Hour, time.Hour},
		{time.Hour + 30*time.Second, time.Hour},
		{time.Hour + 2*time.Minute, time.Hour + 2*time.Minute},
	} {
		clk.Set(t0.Add(step.at))
		if _, err := st.Portfolios(ctx); err != nil {
			t.Fatal(err)
		}
		if got, want := through(), t0.Add(step.through-ratelimit.ReachWindow); !got.Equal(want) {
			t.Errorf("at t0+%v: count through %v, want %v", step.at, got, want)
		}
	}
}
