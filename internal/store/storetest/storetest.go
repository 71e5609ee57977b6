// Package storetest is the store's conformance suite: Run drives any
// driver.Driver through a Harness (the pattern of River's riverdrivertest),
// so that every driver keeps the same behaviour; internal/store runs it on
// SQLite (TestConformance). It also puts a SQLite database in states
// wasend itself never writes (SetCampaignState), opening the file itself,
// as internal/testproc does, so that the store keeps no back door. Only
// tests import it.
package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3" // the driver the store opens the file with
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

// SetCampaignState sets a campaign's state directly, outside the state
// machine (campaign.CampaignTransitions), in the database at path: for
// tests that need a campaign in a given state. wasend itself moves
// campaigns only through the store's named transitions.
func SetCampaignState(ctx context.Context, path string, id int64, st campaign.CampaignState, reason string) error {
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000")
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	res, err := db.ExecContext(ctx, `UPDATE campaigns SET state = ?, pause_reason = ? WHERE id = ?`, string(st), reason, id)
	if err != nil {
		return fmt.Errorf("set campaign %d %s: %w", id, st, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	}
	return nil
}

// Exec runs one statement wasend itself never runs on the database at
// path (an account's bucket emptied, a restriction set by hand): for tests
// that need a row in a state no product move makes directly.
func Exec(ctx context.Context, path, query string, args ...any) error {
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000")
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, query, args...); err != nil {
		return fmt.Errorf("%s: %w", query, err)
	}
	return nil
}

// One is the claim of a batch of one (ClaimN with max 1), as the engine's
// first claim of a run is: for tests that claim one message at a time.
func One(cs []campaign.Claim, err error) (campaign.Claim, error) {
	if err != nil {
		return campaign.Claim{}, err
	}
	return cs[0], nil
}

// OpenSQLite opens a SQLite store at path, as the product opens it, on
// clk with quota days in UTC; the test's cleanup closes it.
func OpenSQLite(t *testing.T, path string, clk *clock.Sim) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), path, driver.Options{Now: clk.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// OpenTest is OpenSQLite on a file of the test's own.
func OpenTest(t *testing.T, clk *clock.Sim) *store.Store {
	t.Helper()
	return OpenSQLite(t, filepath.Join(t.TempDir(), "wasend.db"), clk)
}

// NewClock is a simulated clock standing at T0.
func NewClock() *clock.Sim { return clock.NewSim(T0) }
