package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

// t0 is 09:00 on the first quota day of every test; instants are offsets.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// newFakeClock is the store's Now in tests: the shared simulated clock,
// standing at t0. It only moves when told to.
func newFakeClock() *clock.Sim { return clock.NewSim(t0) }

func openAt(t *testing.T, path string, clk *clock.Sim) *Store {
	t.Helper()
	st, err := Open(t.Context(), path, driver.Options{Now: clk.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func openTest(t *testing.T, clk *clock.Sim) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "wasend.db"), clk)
}

func ptr[T any](v T) *T { return &v }

// unlimitedTiers lifts every tier's limits out of a test's way.
func unlimitedTiers(t *testing.T, st *Store) {
	t.Helper()
	for _, tier := range campaign.TierNames {
		if err := st.SetTier(t.Context(), tier, campaign.Limits{Rate: 1e6, Burst: 1e6, DailyCap: 1e9}); err != nil {
			t.Fatal(err)
		}
	}
}

func mustAccount(t *testing.T, st *Store, name, tier string, o campaign.Overrides) campaign.Account {
	t.Helper()
	a, err := st.AddAccount(t.Context(), campaign.Account{
		Name: name, PhoneNumberID: "pn-" + name, Tier: tier, TokenEnv: "WA_TOKEN_" + strings.ToUpper(name), Overrides: o,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// limited returns overrides that pin all three limits.
func limited(rate float64, burst, dailyCap int) campaign.Overrides {
	return campaign.Overrides{Rate: ptr(rate), Burst: ptr(burst), DailyCap: ptr(dailyCap)}
}

func phone(i int) string { return fmt.Sprintf("+4915100%06d", i) }

// mustCampaign imports n distinct recipients (lines 2…n+1) as one campaign.
func mustCampaign(t *testing.T, st *Store, name string, n int) campaign.Campaign {
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
		m := campaign.Message{Line: i + 2, Input: phone(i), Phone: phone(i), Params: []string{fmt.Sprint("P", i)}}
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

func accountByName(t *testing.T, st *Store, name string) campaign.AccountStatus {
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

func countRows(t *testing.T, st *Store, query string, args ...any) int {
	t.Helper()
	var n int
	if err := st.db.QueryRowContext(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestOpenCreatesPrivateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "dir", "wasend.db")
	st := openAt(t, path, newFakeClock())
	mustAccount(t, st, "a", campaign.TierNew, campaign.Overrides{}) // so the WAL has content
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) && p != path {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s: mode %o, want 600", filepath.Base(p), perm)
		}
	}
	var mode string
	if err := st.db.QueryRowContext(t.Context(), `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	if n := countRows(t, st, `PRAGMA foreign_keys`); n != 1 {
		t.Errorf("foreign_keys = %d, want 1", n)
	}
}

func TestOpenAppliesMigrationsOnce(t *testing.T) {
	files, err := migrations.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "wasend.db")
	st := openAt(t, path, clk)
	mustAccount(t, st, "a", campaign.TierNew, campaign.Overrides{})
	if err := st.SetTier(t.Context(), campaign.TierWarm, campaign.Limits{Rate: 1, Burst: 2, DailyCap: 3}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	clk.Set(at(time.Hour))
	for range 2 {
		st = openAt(t, path, clk)
		if n := countRows(t, st, `SELECT count(*) FROM schema_migrations`); n != len(files) {
			t.Errorf("schema_migrations has %d rows, want %d", n, len(files))
		}
		if n := countRows(t, st, `SELECT count(*) FROM schema_migrations WHERE applied_at = ?`, t0.UnixNano()); n != len(files) {
			t.Errorf("%d migrations stamped at the first open, want %d", n, len(files))
		}
		// Data written before the reopen survives: nothing was re-applied.
		if n := countRows(t, st, `SELECT count(*) FROM accounts`); n != 1 {
			t.Errorf("%d accounts after reopen, want 1", n)
		}
		tiers, err := readmodel.New(st).Tiers(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(tiers) != 3 || tiers[1].Limits != (campaign.Limits{Rate: 1, Burst: 2, DailyCap: 3}) {
			t.Errorf("tiers after reopen = %+v, want warm changed to 1/2/3", tiers)
		}
		st.Close()
	}
}
