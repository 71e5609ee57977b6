package readmodel_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/pgtest"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/pgstore"
	"github.com/wasend/wasend/internal/store/storetest"
)

// TestListsOrderBytewise: lists ordered by a name come out in the same
// order on both drivers, byte by byte as SQLite orders text, though the
// Postgres database's locale (here ICU's en-US) orders these names
// otherwise: "a_", "aa", "b", "B".
func TestListsOrderBytewise(t *testing.T) {
	names := []string{"b", "B", "a_", "aa"}
	want := []string{"B", "a_", "aa", "b"}
	opens := []struct {
		name string
		open func(t *testing.T, clk *clock.Sim) driver.Driver
	}{
		{"sqlite", backends[0].open},
		{"postgres en-US", openPostgresLocale},
	}
	for _, o := range opens {
		t.Run(o.name, func(t *testing.T) {
			ctx := t.Context()
			st := o.open(t, newFakeClock())
			c := storetest.MustCampaign(t, st, "order", 1)
			var ts []campaign.Template
			for i, n := range names {
				a := storetest.MustAccount(t, st, n, campaign.TierActive, storetest.Limited(1, 4, 100))
				if err := st.DropAccount(ctx, c.ID, a.ID, "gone", 131031, t0); err != nil {
					t.Fatal(err)
				}
				if err := st.RegisterRunner(ctx, campaign.Runner{ID: fmt.Sprint("r", i), CampaignID: c.ID, Host: n, PID: 40 + i,
					StartedAt: t0, HeartbeatAt: t0}); err != nil {
					t.Fatal(err)
				}
				ts = append(ts, campaign.Template{WABA: "w", Name: n, Language: "en", Status: "APPROVED", Category: "MARKETING",
					ParameterFormat: "POSITIONAL", Components: "[]", SyncedAt: t0})
				if _, err := st.AddPortfolio(ctx, campaign.Portfolio{Name: "p" + n, CreatedAt: t0}); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.ReplaceTemplates(ctx, "w", ts); err != nil {
				t.Fatal(err)
			}
			r := readmodel.New(st)

			dropped, err := r.DroppedAccounts(ctx, c.ID)
			check(t, "DroppedAccounts", err, want, dropped, func(d readmodel.Dropped) string { return d.Account })
			runners, err := r.Runners(ctx)
			check(t, "Runners", err, want, runners, func(r readmodel.RunnerLeases) string { return r.Host })
			templates, err := r.Templates(ctx)
			check(t, "Templates", err, want, templates, func(t campaign.Template) string { return t.Name })
			portfolios, err := st.Portfolios(ctx)
			var named []campaign.PortfolioStatus
			for _, p := range portfolios {
				if !p.Own {
					named = append(named, p)
				}
			}
			check(t, "Portfolios", err, []string{"pB", "pa_", "paa", "pb"}, named, func(p campaign.PortfolioStatus) string { return p.Name })
		})
	}
}

// check fails t unless list, read without err, is want in that order.
func check[T any](t *testing.T, what string, err error, want []string, list []T, name func(T) string) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	var got []string
	for _, v := range list {
		got = append(got, name(v))
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s in order %q, want %q (bytewise)", what, got, want)
	}
}

// openPostgresLocale opens a store on a fresh database whose collation is
// ICU's en-US, as a server set up with a locale would make it (pgtest's
// server is initialised in C), migrated from nothing.
func openPostgresLocale(t *testing.T, clk *clock.Sim) driver.Driver {
	t.Helper()
	srv := pgtest.Start(t)
	name := fmt.Sprintf("icu%d_%d", os.Getpid(), time.Now().UnixNano())
	admin := func(q string) error {
		c, err := pgx.Connect(t.Context(), srv.DSN("postgres"))
		if err != nil {
			return err
		}
		defer c.Close(t.Context())
		_, err = c.Exec(t.Context(), q)
		return err
	}
	if err := admin("CREATE DATABASE " + name + " TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'"); err != nil {
		t.Skipf("no ICU collation on this postgres: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		c, err := pgx.Connect(ctx, srv.DSN("postgres"))
		if err == nil {
			defer c.Close(ctx)
			_, err = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		}
		if err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	st, err := pgstore.Open(t.Context(), srv.DSN(name), pgstore.Options{Now: clk.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
