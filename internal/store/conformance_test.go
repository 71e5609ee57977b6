package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
	"github.com/wasend/wasend/internal/webhook"
)

// TestConformance runs the store's conformance suite against SQLite: real
// files, one per test, opened as the product opens them.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		NewDB: func(t *testing.T) string { return filepath.Join(t.TempDir(), "wasend.db") },
		Open: func(t *testing.T, db string, cfg storetest.Config) (driver.Driver, error) {
			return store.Open(t.Context(), db, driver.Options{Now: cfg.Now, Location: cfg.Location})
		},
		SetCampaignState: func(ctx context.Context, d driver.Driver, id int64, st campaign.CampaignState, reason string) error {
			return storetest.SetCampaignState(ctx, d.Path(), id, st, reason)
		},
		Drain: func(ctx context.Context, d driver.Driver, max int) (campaign.ApplyReport, error) {
			return webhook.Drain(ctx, d, max, webhook.NewRules(webhook.Policy{}))
		},
		Ledger:      func(d driver.Driver) storetest.Ledger { return claim.New(d) },
		CheckCounts: func(ctx context.Context, d driver.Driver) error { return storetest.CheckCounts(ctx, d.Reader()) },
	})
}
