package runner

import (
	"errors"
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

	dsn := strings.Replace(pgtest.WithPassword(pgtest.Start(t).NewDB(t, ""), "pw-hidden"), "postgres://", "postgresql://", 1)
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

	// --max-held, --ttl (storetest's record cases) and --max-cost
	// (storetest's budget cases) are kept on Postgres: here, no campaign 1.
	if err := pg.SetBudget(t.Context(), 1, 100, "EUR", func(string) pricing.Micros { return 1 }); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("--max-cost on Postgres for no campaign: %v, want ErrNotFound", err)
	}
}
