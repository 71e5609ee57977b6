package runner

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pgtest"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/pgstore"
)

// TestMain stops the postgres a test started.
func TestMain(m *testing.M) { pgtest.Main(m) }

// OpenStore picks the driver from --db: a file's path opens SQLite, a
// postgres:// or postgresql:// URL the store on Postgres, whose Path (what
// status prints) hides the password.
func TestOpenStorePostgres(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.db")
	st, err := OpenStore(t.Context(), file, driver.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.(*store.Store); !ok {
		t.Errorf("%s opened %T, want SQLite's store", file, st)
	}
	st.Close()

	dsn := strings.Replace(pgtest.Start(t).NewDB(t, ""), "postgres://wasend@", "postgresql://wasend:pw-hidden@", 1)
	pg, err := OpenStore(t.Context(), dsn, driver.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if _, ok := pg.(*pgstore.Store); !ok {
		t.Errorf("%s opened %T, want the store on Postgres", RedactDB(dsn), pg)
	}
	for _, s := range []string{pg.Path(), RedactDB(dsn)} {
		if strings.Contains(s, "pw-hidden") || !strings.Contains(s, "xxxxx") {
			t.Errorf("%q: want the password shown as xxxxx", s)
		}
	}
	if RedactDB(file) != file {
		t.Errorf("RedactDB(%q) = %q, want the path as it is", file, RedactDB(file))
	}

	// What the store on Postgres does not keep yet is refused by name,
	// not skipped; the defaults a run always passes go through.
	if _, err := setSending(t.Context(), pg, 1, campaign.DefaultMaxHeld, 0); err != nil {
		t.Errorf("the default --max-held without --ttl: %v", err)
	}
	for _, tc := range []struct {
		name    string
		maxHeld int
		ttl     time.Duration
	}{{"--max-held", 5, 0}, {"--ttl", campaign.DefaultMaxHeld, time.Hour}} {
		if _, err := setSending(t.Context(), pg, 1, tc.maxHeld, tc.ttl); err == nil || !strings.Contains(err.Error(), "SetSending") {
			t.Errorf("%s on Postgres: %v, want it refused naming SetSending", tc.name, err)
		}
	}
	if err := setBudget(t.Context(), pg, 1, 100, "EUR", func(string) pricing.Micros { return 1 }); err == nil || !strings.Contains(err.Error(), "--max-cost") {
		t.Errorf("--max-cost on Postgres: %v, want it refused", err)
	}
}
