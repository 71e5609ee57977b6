package dispatch_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/whatsapp"
)

// env is a real store, a real sandbox over HTTP, and a simulated clock.
type env struct {
	t      *testing.T
	ctx    context.Context
	clock  *clock.Sim
	st     *store.Store
	box    *sandbox.Server
	client *whatsapp.Client
	path   string
}

func newEnv(t *testing.T, start time.Time, faults sandbox.Faults) *env {
	t.Helper()
	return newEnvBox(t, start, sandbox.Options{Faults: faults})
}

// newEnvBox is newEnv with every sandbox option; its clock is the env's.
func newEnvBox(t *testing.T, start time.Time, opts sandbox.Options) *env {
	t.Helper()
	ctx := context.Background()
	clk := clock.NewSim(start)
	path := filepath.Join(t.TempDir(), "wasend.db")
	st, err := store.Open(ctx, path, driver.Options{Now: clk.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	opts.Now = clk.Now
	box := sandbox.New(opts)
	srv := httptest.NewServer(box)
	t.Cleanup(srv.Close)
	return &env{t: t, ctx: ctx, clock: clk, st: st, box: box, path: path,
		client: whatsapp.New(whatsapp.Config{BaseURL: srv.URL, Timeout: 5 * time.Second})}
}

func (e *env) addAccount(name, pnid, tier string) {
	e.t.Helper()
	if _, err := e.st.AddAccount(e.ctx, campaign.Account{Name: name, PhoneNumberID: pnid, Tier: tier, TokenEnv: "T"}); err != nil {
		e.t.Fatal(err)
	}
}

// importN imports n distinct German mobile numbers as one campaign.
func (e *env) importN(n int) campaign.Campaign {
	e.t.Helper()
	var b strings.Builder
	b.WriteString("phone,name\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "+49151%08d,Person %d\n", 10000000+i, i)
	}
	c, skipped, err := runner.Import(e.ctx, e.st, strings.NewReader(b.String()), "sim.csv", campaign.Campaign{
		Name: "sim", Fingerprint: fmt.Sprint("sim-", n), Source: "sim.csv",
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: sandbox.DemoTemplate, Lang: "en_US", Params: []string{"name"}},
	}, "")
	if err != nil {
		e.t.Fatal(err)
	}
	if len(skipped) != 0 || c.Imported != n {
		e.t.Fatalf("imported %d, skipped %v; want %d and none", c.Imported, skipped, n)
	}
	return c
}

func (e *env) engine(c campaign.Campaign, o dispatch.Options) *dispatch.Engine {
	e.t.Helper()
	o.Campaign, o.Sender, o.Clock = c, e.client, e.clock
	if o.Ledger == nil {
		o.Ledger = claim.New(e.st)
	}
	o.Token = func(string) (string, error) { return "test-token", nil }
	if o.Runner.ID == "" {
		o.Runner = campaign.Runner{ID: "sim", Host: "test", PID: 1}
	}
	eng, err := dispatch.New(o)
	if err != nil {
		e.t.Fatal(err)
	}
	return eng
}

// claims returns, per account name, the instants its tokens were spent.
func (e *env) claims() map[string][]time.Time { return e.claimsOf(true) }

// tries is claims without those the engine put back unsent (their account
// had just been throttled or dropped): the requests actually made.
func (e *env) tries() map[string][]time.Time { return e.claimsOf(false) }

func (e *env) claimsOf(all bool) map[string][]time.Time {
	e.t.Helper()
	db, err := sql.Open("sqlite3", "file:"+e.path+"?mode=ro")
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT a.name, t.claimed_at FROM attempts t JOIN accounts a ON a.id = t.account_id
		WHERE ? OR coalesce(t.class, '') <> 'not-sent' ORDER BY t.claimed_at`, all)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]time.Time{}
	for rows.Next() {
		var name string
		var at int64
		if err := rows.Scan(&name, &at); err != nil {
			e.t.Fatal(err)
		}
		out[name] = append(out[name], time.Unix(0, at).UTC())
	}
	return out
}

// idealFinish is when the n-th message could go at the earliest: every
// account sends each token the moment its bucket has one, until its cap,
// and starts again at the next midnight with whatever the bucket holds.
func idealFinish(start time.Time, tiers []campaign.Limits, n int) time.Time {
	var all []time.Time
	for _, l := range tiers {
		tokens, at := float64(l.Burst), start
		day, used := start.Truncate(24*time.Hour), 0
		for k := 0; k < n; k++ {
			if used == l.DailyCap {
				next := day.Add(24 * time.Hour)
				tokens = min(float64(l.Burst), tokens+next.Sub(at).Seconds()*l.Rate)
				at = next
			}
			if tokens < 1 {
				at = at.Add(time.Duration((1 - tokens) / l.Rate * float64(time.Second)))
				tokens = 1
			}
			if d := at.Truncate(24 * time.Hour); d != day {
				day, used = d, 0 // cron reset the quota at midnight
			}
			all = append(all, at)
			tokens--
			used++
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Before(all[j]) })
	return all[n-1]
}

// TestScheduleThreeTiersOverDays runs 1,000 recipients over one account per
// tier with the default limits, starting ten minutes before midnight so the
// campaign spans three quota days. cron's `quota reset` is played by the
// clock hook at each midnight.
func TestScheduleThreeTiersOverDays(t *testing.T) {
	start := time.Date(2026, 3, 2, 23, 50, 0, 0, time.UTC)
	e := newEnv(t, start, sandbox.Faults{})
	e.addAccount("fresh", "1001", campaign.TierNew)
	e.addAccount("warm", "1002", campaign.TierWarm)
	e.addAccount("main", "1003", campaign.TierActive)
	resets := 0
	e.clock.OnAdvance = func(from, to time.Time) {
		if from.Truncate(24*time.Hour) != to.Truncate(24*time.Hour) {
			resets++
			if _, err := e.st.ResetQuota(e.ctx, nil, false); err != nil {
				t.Error(err)
			}
		}
	}
	const n = 1000
	c := e.importN(n)
	eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 4}, Poll: time.Minute})
	if err := eng.Run(e.ctx); err != nil {
		t.Fatal(err)
	}
	finish := e.clock.Now()

	counts, err := e.st.Counts(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if counts[campaign.Sent] != n || counts.Total() != n {
		t.Fatalf("counts %v, want %d sent", counts, n)
	}
	accepted := e.box.Accepted()
	if len(accepted) != n {
		t.Fatalf("server accepted %d distinct recipients, want %d", len(accepted), n)
	}
	for to, k := range accepted {
		if k != 1 {
			t.Errorf("%s accepted %d times", to, k)
		}
	}
	if resets != 2 {
		t.Errorf("campaign spanned %d midnights, want 2", resets)
	}

	limits := map[string]campaign.Limits{
		"fresh": campaign.DefaultTiers[campaign.TierNew],
		"warm":  campaign.DefaultTiers[campaign.TierWarm],
		"main":  campaign.DefaultTiers[campaign.TierActive],
	}
	for name, times := range e.claims() {
		checkBucket(t, name, times, limits[name])
		perDay := map[string]int{}
		for _, at := range times {
			perDay[at.Format(time.DateOnly)]++
		}
		for day, k := range perDay {
			if k > limits[name].DailyCap {
				t.Errorf("%s sent %d on %s, cap %d", name, k, day, limits[name].DailyCap)
			}
		}
	}

	ideal := idealFinish(start, []campaign.Limits{limits["fresh"], limits["warm"], limits["main"]}, n)
	took, best := finish.Sub(start), ideal.Sub(start)
	t.Logf("finished after %v; ideal %v", took, best)
	if diff := took - best; diff < 0 || diff > best/100 {
		t.Errorf("finished after %v, ideal schedule %v: off by %v (> 1%%)", took, best, diff)
	}
}

// checkBucket fails when some window of sends holds more than the bucket
// allows: burst + rate × window length.
func checkBucket(t *testing.T, name string, times []time.Time, l campaign.Limits) {
	t.Helper()
	for i := range times {
		for j := i; j < len(times); j++ {
			allowed := float64(l.Burst) + times[j].Sub(times[i]).Seconds()*l.Rate + 1e-6
			if got := float64(j - i + 1); got > allowed {
				t.Errorf("%s: %v sends between %s and %s, bucket allows %.2f",
					name, got, times[i].Format(time.TimeOnly), times[j].Format(time.TimeOnly), allowed)
				return
			}
		}
	}
}

// TestScheduleOnePortfolioOverDays sends 10,000 recipients through three
// fast numbers of one 2K portfolio (5 % margin): the messaging limit, not
// the buckets, paces the campaign. Every 24 h window of requests reaches
// at most 1,900 distinct recipients — and some reach exactly that.
func TestScheduleOnePortfolioOverDays(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	e := newEnv(t, start, sandbox.Faults{})
	if _, err := e.st.AddPortfolio(e.ctx, campaign.Portfolio{Name: "acme", PinnedLimit: 2000, Margin: 0.05}); err != nil {
		t.Fatal(err)
	}
	fast := campaign.Overrides{Rate: ptr(20.0), Burst: ptr(20), DailyCap: ptr(100_000)}
	for i, name := range []string{"one", "two", "three"} {
		if _, err := e.st.AddAccount(e.ctx, campaign.Account{Name: name, PhoneNumberID: fmt.Sprint(2001 + i),
			Tier: campaign.TierActive, TokenEnv: "T", Overrides: fast, Portfolio: "acme"}); err != nil {
			t.Fatal(err)
		}
	}
	const n = 10_000
	c := e.importN(n)
	// A waiting engine looks again every Poll: an hour keeps the days of
	// waiting for the window to a few claims.
	eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 8}, Poll: time.Hour})
	if err := eng.Run(e.ctx); err != nil {
		t.Fatal(err)
	}
	took := e.clock.Now().Sub(start)
	counts, err := e.st.Counts(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if counts[campaign.Sent] != n {
		t.Fatalf("counts %v, want %d sent", counts, n)
	}
	// 1,900 a window: the sixth window sends the last 500.
	if day := 24 * time.Hour; took < 5*day || took > 5*day+time.Hour {
		t.Errorf("finished after %v, want a little over five days", took)
	}

	sends := e.sendsByRecipient()
	perAccount := map[string]int{}
	for _, s := range sends {
		perAccount[s.account]++
	}
	if len(perAccount) != 3 {
		t.Errorf("sends per account %v: all three numbers share the work", perAccount)
	}
	// The window (t-24h, t] slides over the sends; in holds how many of
	// its requests went to each recipient.
	most, from, in := 0, 0, map[string]int{}
	for j := range sends {
		in[sends[j].phone]++
		for !sends[from].at.After(sends[j].at.Add(-24 * time.Hour)) {
			if in[sends[from].phone]--; in[sends[from].phone] == 0 {
				delete(in, sends[from].phone)
			}
			from++
		}
		if len(in) > 1900 {
			t.Fatalf("%d distinct recipients in the 24 h up to %v, limit 2,000 minus 5 %%", len(in), sends[j].at)
		}
		most = max(most, len(in))
	}
	if most != 1900 {
		t.Errorf("at most %d distinct recipients in a window, want exactly 1,900", most)
	}
}

type recipientSend struct {
	at      time.Time
	phone   string
	account string
}

// sendsByRecipient returns every request made, oldest first.
func (e *env) sendsByRecipient() []recipientSend {
	e.t.Helper()
	db, err := sql.Open("sqlite3", "file:"+e.path+"?mode=ro")
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT t.claimed_at, m.phone, a.name FROM attempts t JOIN messages m ON m.id = t.message_id
		JOIN accounts a ON a.id = t.account_id WHERE coalesce(t.class, '') <> 'not-sent' ORDER BY t.claimed_at, t.id`)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []recipientSend
	for rows.Next() {
		var (
			s  recipientSend
			at int64
		)
		if err := rows.Scan(&at, &s.phone, &s.account); err != nil {
			e.t.Fatal(err)
		}
		s.at = time.Unix(0, at).UTC()
		out = append(out, s)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
