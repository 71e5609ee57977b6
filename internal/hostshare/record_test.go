package hostshare

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "wasend.db"), driver.Options{Now: func() time.Time { return t0 }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func phones(list []campaign.Suppression) string {
	var out []string
	for _, s := range list {
		out = append(out, s.Phone)
	}
	return strings.Join(out, " ")
}

// Without --limits the database is the record; under --limits Redis is,
// and the database follows each change: what the record reads is Redis's,
// while the database keeps its own until a sender copies it.
func TestRecordChoosesRedisUnderLimits(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	warm := campaign.Limits{Rate: 0.2, Burst: 7, DailyCap: 90}
	for _, limits := range []bool{false, true} {
		t.Run(map[bool]string{false: "database", true: "redis"}[limits], func(t *testing.T) {
			srv.Client(t).FlushAll(ctx)
			st := openStore(t)
			var sh *Shared
			if limits {
				var err error
				if sh, err = OpenShared(ctx, srv.URL()); err != nil {
					t.Fatal(err)
				}
				defer sh.Close()
			}
			rec := NewRecord(st, sh)
			if rec.Shared() != limits {
				t.Fatalf("Shared() = %v, want %v", rec.Shared(), limits)
			}
			if n, err := rec.Suppress(ctx, []campaign.Suppression{{Phone: "+4915100000001"}, {Phone: "+4915100000002"}}, t0); err != nil || n != 2 {
				t.Fatalf("Suppress = %d, %v; want 2 added", n, err)
			}
			if n, err := rec.Unsuppress(ctx, []string{"+4915100000002", "+4915100000003"}); err != nil || n != 1 {
				t.Fatalf("Unsuppress = %d, %v; want 1 removed", n, err)
			}
			if err := rec.SetTier(ctx, campaign.TierWarm, warm); err != nil {
				t.Fatal(err)
			}
			if err := rec.SetGlobal(ctx, GlobalSetting{On: true, Limit: ratelimit.Limit{Rate: 2, Burst: 10}}); err != nil {
				t.Fatal(err)
			}
			// Both the record and this database have every change.
			list, err := rec.Suppressions(ctx)
			if err != nil || phones(list) != "+4915100000001" {
				t.Errorf("record's list %q, %v; want +4915100000001", phones(list), err)
			}
			local, err := readmodel.New(st).Suppressions(ctx)
			if err != nil || phones(local) != "+4915100000001" {
				t.Errorf("database's list %q, %v; want +4915100000001", phones(local), err)
			}
			if l, err := rec.Tier(ctx, campaign.TierWarm); err != nil || l != warm {
				t.Errorf("Tier(warm) = %+v, %v; want %+v", l, err, warm)
			}
			tiers, err := rec.Tiers(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range tiers {
				if want := tr.Name == campaign.TierWarm && limits; tr.Shared != want || tr.Limits != tr.Tier.Limits {
					t.Errorf("tier %s: shared %v (want %v), record %+v, database %+v", tr.Name, tr.Shared, want, tr.Limits, tr.Tier.Limits)
				}
			}
			g, err := rec.Global(ctx)
			if err != nil || !g.Database.On || g.Database.Limit.Burst != 10 || (g.Shared != nil) != limits {
				t.Errorf("Global = %+v, %v; want on with burst 10, shared %v", g, err, limits)
			}
			if !limits {
				return
			}
			// Another host changes the record: reads give Redis's, the
			// database keeps its own until a sender copies it.
			other, err := OpenShared(ctx, srv.URL())
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			faster := campaign.Limits{Rate: 1, Burst: 9, DailyCap: 95}
			if err := other.SetTier(ctx, campaign.TierWarm, faster); err != nil {
				t.Fatal(err)
			}
			if l, err := rec.Tier(ctx, campaign.TierWarm); err != nil || l != faster {
				t.Errorf("after another host's change Tier(warm) = %+v, %v; want %+v", l, err, faster)
			}
			if tiers, err = rec.Tiers(ctx); err != nil {
				t.Fatal(err)
			}
			if tr := tiers[1]; tr.Name != campaign.TierWarm || tr.Limits != faster || tr.Tier.Limits != warm {
				t.Errorf("tier %s: record %+v, database %+v; want %+v and %+v", tr.Name, tr.Limits, tr.Tier.Limits, faster, warm)
			}
		})
	}
}

// Under --limits a change Redis does not take changes nothing here.
func TestRecordRedisDownChangesNothingHere(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	st := openStore(t)
	sh := openShared(t, srv)
	rec := NewRecord(st, sh)
	srv.Kill()
	before, err := readmodel.New(st).Tiers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]error{}
	_, steps["suppress"] = rec.Suppress(ctx, []campaign.Suppression{{Phone: "+4915100000001"}}, t0)
	steps["tier"] = rec.SetTier(ctx, campaign.TierNew, campaign.Limits{Rate: 1, Burst: 1, DailyCap: 1})
	steps["global"] = rec.SetGlobal(ctx, GlobalSetting{On: true, Limit: ratelimit.Limit{Rate: 1, Burst: 1}})
	for name, err := range steps {
		var dbErr *DatabaseError
		if !errors.Is(err, ErrUnavailable) || errors.As(err, &dbErr) || !strings.Contains(err.Error(), "nothing changed in this database") {
			t.Errorf("%s with Redis down: %v; want Redis unavailable and nothing changed here", name, err)
		}
	}
	list, _ := readmodel.New(st).Suppressions(ctx)
	after, _ := readmodel.New(st).Tiers(ctx)
	_, _, on, _ := readmodel.New(st).GlobalLimit(ctx)
	if len(list) != 0 || after[0] != before[0] || on {
		t.Errorf("database changed: list %v, tier new %+v (was %+v), global on %v", list, after[0], before[0], on)
	}
}
