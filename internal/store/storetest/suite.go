package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/store/driver"
)

// Harness is what a driver of the store gives the conformance suite: fresh
// databases, handles on them, and the back doors a test needs to put a
// database in states wasend never writes. Everything else the suite does
// goes through driver.Driver.
type Harness struct {
	// NewDB makes an empty database for one test and returns where it is
	// (a file's path, a DSN); the test's cleanup removes it.
	NewDB func(t *testing.T) string
	// Open opens a Driver on the database at db. The suite closes it. It
	// may be called more than once for one db: each call is a handle of
	// its own, as another process would open, for the tests of claims
	// racing on one database.
	Open func(t *testing.T, db string, cfg Config) (driver.Driver, error)
	// SetCampaignState sets a campaign's state outside the state machine
	// (as SetCampaignState in this package does for SQLite).
	SetCampaignState func(ctx context.Context, d driver.Driver, id int64, st campaign.CampaignState, reason string) error
	// Drain applies up to max bodies of the inbox as product code does
	// (webhook.Drain over WithInbox), which storetest, a part of the store,
	// may not import. Nil skips the inbox tests.
	Drain func(ctx context.Context, d driver.Driver, max int) (campaign.ApplyReport, error)
	// CheckCounts recounts every campaign's rows and says where the kept
	// counts differ; run at the end of every test. Nil: not checked.
	CheckCounts func(ctx context.Context, d driver.Driver) error
	// Ledger puts the claim on a driver: internal/claim's New.
	Ledger func(d driver.Driver) Ledger
	// Rebind rewrites the suite's read-only checks, written with ?
	// placeholders as the read models' queries are, into the database's
	// (readmodel's Dialect.Rebind); they run on the driver's Reader. Nil:
	// the SQL as written.
	Rebind func(query string) string
	// EndSessions ends every session the server keeps for d, as an
	// administrator or a restart would. Nil: the driver keeps none
	// (SQLite); the sessions test skips.
	EndSessions func(ctx context.Context, d driver.Driver) error
	// Retried is how many transactions d ran again after the database
	// aborted them for a deadlock. Nil: the driver counts none (SQLite's
	// one writer never deadlocks).
	Retried func(d driver.Driver) int64
}

// Config is what the suite asks of a handle.
type Config struct {
	// Now is the handle's clock: a test's clock.Sim.
	Now func() time.Time
	// Location is the zone of quota days asked for (driver.Options'); the
	// suite always gives one.
	Location *time.Location
}

// Run runs the conformance suite against h: every sub-test opens its own
// database, on a simulated clock standing at t0, and never sleeps. The
// suite's read-only checks are SQL on the driver's Reader (or the
// harness's), written as the read models' queries are (see driver.Driver).
func Run(t *testing.T, h Harness) {
	if h.Ledger == nil {
		t.Fatal("storetest: the harness gives no Ledger (claim.New)")
	}
	claims, checks = h.Ledger, h
	s := suite{h}
	groups := []struct {
		name  string
		tests []sub
	}{
		{"accounts", s.accountTests()},
		{"portfolios", s.portfolioTests()},
		{"import", s.importTests()},
		{"claim", s.claimTests()},
		{"sticky", s.stickyTests()},
		{"record", s.recordTests()},
		{"rescue", s.rescueTests()},
		{"leases", s.leaseTests()},
		{"moves", s.moveTests()},
		{"suppressions", s.suppressTests()},
		{"inbox", s.inboxTests()},
		{"put back", s.putBackTests()},
		{"inbound", s.inboundTests()},
		{"reads", s.readTests()},
		{"pricing", s.pricingTests()},
		{"sessions", s.sessionTests()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tt := range g.tests {
				t.Run(tt.name, tt.run)
			}
		})
	}
}

// checks is the harness whose Rebind the suite's read-only checks use,
// set by Run.
var checks Harness

// checkReader runs the suite's read-only checks on a driver's database.
type checkReader struct {
	db     *sql.DB
	rebind func(string) string
}

// checked is where the checks read d's database: its Reader.
func checked(d driver.Driver) checkReader {
	r := checkReader{db: d.Reader(), rebind: checks.Rebind}
	if r.rebind == nil {
		r.rebind = func(q string) string { return q }
	}
	return r
}

func (r checkReader) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return r.db.QueryRowContext(ctx, r.rebind(query), args...)
}

func (r checkReader) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return r.db.QueryContext(ctx, r.rebind(query), args...)
}

// sub is one sub-test of the suite.
type sub struct {
	name string
	run  func(t *testing.T)
}

type suite struct{ h Harness }

// T0 is 09:00 on the first quota day of every test; instants are offsets
// (ClaimStep's too).
var T0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

var t0 = T0

func at(d time.Duration) time.Time { return t0.Add(d) }

// newFakeClock is a driver's Now in the suite: a simulated clock standing
// at t0. It only moves when told to.
func newFakeClock() *clock.Sim { return clock.NewSim(t0) }

// openAt opens a handle on db with the clock clk and quota days in loc
// (UTC when nil); counts are checked, then the handle closed, when the
// test ends.
// handles opens n handles on one new database, as n processes would.
func (s suite) handles(t *testing.T, n int, clk *clock.Sim) []driver.Driver {
	t.Helper()
	db := s.h.NewDB(t)
	stores := make([]driver.Driver, n)
	for i := range stores {
		stores[i] = s.openAt(t, db, clk, nil)
	}
	return stores
}

func (s suite) openAt(t *testing.T, db string, clk *clock.Sim, loc *time.Location) driver.Driver {
	t.Helper()
	if loc == nil {
		loc = time.UTC
	}
	st, err := s.h.Open(t, db, Config{Now: clk.Now, Location: loc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if s.h.CheckCounts != nil {
		t.Cleanup(func() { // before Close: cleanups run last first
			if err := s.h.CheckCounts(context.Background(), st); err != nil {
				t.Errorf("counts: %v", err)
			}
		})
	}
	return st
}

// openTest opens a fresh database.
func (s suite) openTest(t *testing.T, clk *clock.Sim) driver.Driver {
	t.Helper()
	return s.openAt(t, s.h.NewDB(t), clk, nil)
}

func (s suite) setCampaignState(t *testing.T, st driver.Driver, id int64, state campaign.CampaignState, reason string) error {
	t.Helper()
	return s.h.SetCampaignState(t.Context(), st, id, state, reason)
}

func ptr[T any](v T) *T { return &v }

// The seeding helpers below are also for other packages' tests that read
// what a store holds (internal/readmodel's): one way to make an account
// and a campaign.

// MustAccount adds an account of tier with overrides o, token variable
// WA_TOKEN_<NAME>.
func MustAccount(t *testing.T, st driver.Driver, name, tier string, o campaign.Overrides) campaign.Account {
	t.Helper()
	a, err := st.AddAccount(t.Context(), campaign.Account{
		Name: name, PhoneNumberID: "pn-" + name, Tier: tier, TokenEnv: "WA_TOKEN_" + strings.ToUpper(name), Overrides: o,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Limited returns overrides that pin all three limits.
func Limited(rate float64, burst, dailyCap int) campaign.Overrides {
	return campaign.Overrides{Rate: ptr(rate), Burst: ptr(burst), DailyCap: ptr(dailyCap)}
}

// Phone is the i-th test number, as MustCampaign's rows have them.
func Phone(i int) string { return fmt.Sprintf("+4915100%06d", i) }

// MustCampaign imports n distinct recipients (lines 2…n+1) as one campaign.
func MustCampaign(t *testing.T, st driver.Driver, name string, n int) campaign.Campaign {
	t.Helper()
	im, err := st.Import(t.Context(), campaign.Campaign{
		Name: name, Fingerprint: "fp-" + name, Source: name + ".csv",
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "hello", Lang: "en_US", Params: []string{"name"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	for i := range n {
		m := campaign.Message{Line: i + 2, Input: Phone(i), Phone: Phone(i), Params: []string{fmt.Sprint("P", i)}}
		if reason, err := im.Add(t.Context(), m); err != nil || reason != "" {
			t.Fatalf("add line %d: %q, %v", m.Line, reason, err)
		}
	}
	c, err := im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// AccountByName is the account of that name as Accounts lists it.
func AccountByName(t *testing.T, st driver.Driver, name string) campaign.AccountStatus {
	t.Helper()
	accts, err := st.Accounts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range accts {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no account %q", name)
	return campaign.AccountStatus{}
}

// CountRows runs a read-only count on the driver's database (see checked).
func CountRows(t *testing.T, st driver.Driver, query string, args ...any) int {
	t.Helper()
	var n int
	if err := checked(st).QueryRowContext(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// claim is one claim: ClaimN of one (what *store.Store's Claim is).
func claim(t *testing.T, st driver.Driver, id int64, runner string, now time.Time) (campaign.Claim, error) {
	t.Helper()
	cs, err := ledger(st).ClaimN(t.Context(), id, runner, now, 1)
	if err != nil {
		return campaign.Claim{}, err
	}
	return cs[0], nil
}

func mustClaim(t *testing.T, st driver.Driver, id int64, runner string, now time.Time) campaign.Claim {
	t.Helper()
	c, err := claim(t, st, id, runner, now)
	if err != nil {
		t.Fatalf("claim at +%v: %v", now.Sub(t0), err)
	}
	return c
}

// record stores one outcome: RecordAll of one (what *store.Store's Record
// is).
func record(t *testing.T, st driver.Driver, c campaign.Claim, runner string, o campaign.Outcome, now time.Time) error {
	t.Helper()
	return st.RecordAll(t.Context(), runner, []campaign.Result{{Claim: c, Outcome: o, At: now}})
}

func registerRunner(t *testing.T, st driver.Driver, id string, campaignID int64, beat time.Time) {
	t.Helper()
	if err := st.RegisterRunner(t.Context(), campaign.Runner{ID: id, CampaignID: campaignID, Host: "h", PID: 42, StartedAt: beat, HeartbeatAt: beat}); err != nil {
		t.Fatal(err)
	}
}

// mustStart marks claims' requests started, as a runner does just before
// it makes them; every one must be the row's claim still.
func mustStart(t *testing.T, st driver.Driver, runner string, now time.Time, cs ...campaign.Claim) {
	t.Helper()
	refused, err := st.Start(t.Context(), runner, cs, now)
	if err != nil || len(refused) > 0 {
		t.Fatalf("start %d requests of %s: %v refused, %v", len(cs), runner, refused, err)
	}
}
