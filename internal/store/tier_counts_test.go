package store

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/tierrecord"
)

// scanTierDays is tierDays as it was before the kept counts: every
// attempt since, grouped by quota day in Go.
func scanTierDays(t *testing.T, q querier, id int64, since time.Time, loc *time.Location) []campaign.DayStats {
	t.Helper()
	rows, err := q.QueryContext(t.Context(), `SELECT claimed_at, coalesce(outcome, ''), coalesce(class, ''), coalesce(error_code, 0)
		FROM attempts WHERE account_id = ? AND claimed_at >= ?`, id, since.UnixNano())
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var reqs []campaign.TierRequest
	for rows.Next() {
		var (
			r  campaign.TierRequest
			at int64
		)
		if err := rows.Scan(&at, &r.Outcome, &r.Class, &r.ErrorCode); err != nil {
			t.Fatal(err)
		}
		r.At = fromNanos(at)
		reqs = append(reqs, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return campaign.DaysOf(reqs, loc)
}

// The kept counts give tierDays what scanning the attempts gave, at every
// step of random attempts written straight to the table (so the triggers
// keep every count) over several quota days on a simulated clock: any mix
// of outcomes, classes and codes, answers that change a row's class and
// code, claims put back without a request, a campaign deleted, since at
// any instant (mid-minute too), and zones whose days start at midnight UTC,
// on a quarter hour, move with daylight saving, or sit seconds off the
// minute (so a day's edge cuts a minute). The counts also match a recount.
func TestTierDaysMatchScan(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	ctx := t.Context()
	var ids []int64
	for _, name := range []string{"a", "b"} {
		ids = append(ids, mustAccount(t, st, name, campaign.TierNew, campaign.Overrides{}).ID)
	}
	for _, name := range []string{"one", "two", "three"} {
		mustCampaign(t, st, name, 20)
	}
	var msgs []int64
	rows, err := st.db.QueryContext(ctx, `SELECT id FROM messages ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, id)
	}
	rows.Close()

	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	zones := []*time.Location{time.UTC, time.FixedZone("+05:45", 5*3600+45*60), ny,
		time.FixedZone("odd", -(3*3600 + 17*60 + 23))}
	outcomes := []any{nil, "sent", "retry", "failed", "unknown"}
	classes := []any{nil, "sent", "throttled", "transient", "permanent", "not-sent", "ambiguous"}
	codes := []any{nil, 131048, 131064, 131026, 130429}
	pick := func(rng *rand.Rand, vs []any) any { return vs[rng.IntN(len(vs))] }

	rng := rand.New(rand.NewPCG(46, 25))
	// Across the spring daylight-saving change in New York (8 March 2026).
	now := time.Date(2026, 3, 5, 22, 0, 0, 0, time.UTC)
	start := now
	for step := range 600 {
		now = now.Add(time.Duration(rng.IntN(int(40 * time.Minute))))
		for range 1 + rng.IntN(6) {
			at := now.Add(-time.Duration(rng.IntN(int(3 * time.Minute))))
			if _, err := st.db.ExecContext(ctx, `INSERT INTO attempts (message_id, account_id, claimed_at, done_at, outcome, error_code, class)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, msgs[rng.IntN(len(msgs))], ids[rng.IntN(len(ids))], at.UnixNano(),
				at.Add(time.Second).UnixNano(), pick(rng, outcomes), pick(rng, codes), pick(rng, classes)); err != nil {
				t.Fatal(err)
			}
		}
		if rng.IntN(3) == 0 { // an answer changes an earlier attempt
			if _, err := st.db.ExecContext(ctx, `UPDATE attempts SET outcome = ?, class = ?, error_code = ?
				WHERE id = (SELECT id FROM attempts ORDER BY random() LIMIT 1)`,
				pick(rng, outcomes), pick(rng, classes), pick(rng, codes)); err != nil {
				t.Fatal(err)
			}
		}
		if step == 450 {
			if err := st.DeleteCampaign(ctx, 2); err != nil {
				t.Fatal(err)
			}
			msgs = slices.DeleteFunc(msgs, func(id int64) bool {
				return countRows(t, st, `SELECT count(*) FROM messages WHERE id = ?`, id) == 0
			})
		}
		if step%10 != 0 {
			continue
		}
		for _, loc := range zones {
			for _, id := range ids {
				since := start.Add(time.Duration(rng.Int64N(int64(now.Sub(start) + time.Hour))))
				got, err := tierrecord.Days(ctx, st.db, id, since, loc)
				if err != nil {
					t.Fatal(err)
				}
				want := scanTierDays(t, st.db, id, since, loc)
				if !slices.Equal(got, want) {
					t.Fatalf("step %d, account %d since %v in %v:\n kept %v\n scan %v", step, id, since, loc, got, want)
				}
			}
		}
	}
	if days := now.Sub(start).Hours() / 24; days < 4 {
		t.Fatalf("the attempts span %.1f days, want several", days)
	}
	if err := st.CheckCounts(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, st, `SELECT count(*) FROM tier_minutes`); n == 0 {
		t.Fatal("tier_minutes is empty: nothing was kept")
	}
	// The deleted campaign's attempts and counts are gone.
	if n := countRows(t, st, `SELECT count(*) FROM tier_minutes WHERE campaign_id = 2`); n != 0 {
		t.Errorf("deleted campaign keeps %d tier_minutes rows", n)
	}
}

// A migration that rebuilds attempts drops tier_minutes' triggers: the next
// open fills the table again from the attempts and creates them.
func TestTierTriggersComeBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wasend.db")
	clk := newFakeClock()
	st := openAt(t, path, clk)
	mustAccount(t, st, "a", campaign.TierActive, limited(100, 100, 1000))
	mustCampaign(t, st, "rebuilt", 4)
	if _, err := st.db.Exec(`DROP TRIGGER tier_minutes_insert;
		INSERT INTO attempts (message_id, account_id, claimed_at, outcome, class) SELECT id, 1, 5, 'retry', 'not-sent' FROM messages`); err != nil {
		t.Fatal(err)
	}
	if err := st.CheckCounts(t.Context()); err == nil {
		t.Fatal("attempts written without the trigger, yet the counts agree: the test proves nothing")
	}
	st.Close()

	st = openAt(t, path, clk)
	if err := st.CheckCounts(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, st, `SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'tier_minutes%'`); n != len(tierTriggerNames) {
		t.Errorf("%d tier_minutes triggers after reopening, want %d", n, len(tierTriggerNames))
	}
}
