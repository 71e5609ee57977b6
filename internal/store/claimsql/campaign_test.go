package claimsql

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/store/dialect"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// countingTx answers every read with one row of zero values (none for the
// competitors) and counts the reads of a campaign's row.
type countingTx struct{ campaignReads int }

func (t *countingTx) Exec(context.Context, string, ...any) (int64, error) { return 1, nil }

func (t *countingTx) Query(_ context.Context, query string, _ ...any) (Rows, error) {
	if strings.Contains(query, "FROM campaigns WHERE id = ") {
		t.campaignReads++
		return &oneRow{left: 1}, nil
	}
	return &oneRow{}, nil
}

func (t *countingTx) Accounts(context.Context, string, ...any) ([]rowscan.Account, error) {
	return nil, nil
}

type oneRow struct{ left int }

func (r *oneRow) Next() bool             { r.left--; return r.left >= 0 }
func (r *oneRow) Scan(dest ...any) error { return nil }
func (r *oneRow) Err() error             { return nil }
func (r *oneRow) Close()                 {}

// TestCampaignReadOnce: a claim reads its campaign's row once, however many
// of its parts it asks for, and again after it writes to the row, so that
// what it reads is what the database holds.
func TestCampaignReadOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1e9, 0)
	look := map[string]func(c Common) error{
		"Stopped":  func(c Common) error { return c.Stopped(ctx, 1) },
		"Schedule": func(c Common) error { _, err := c.Schedule(ctx, 1); return err },
		"Turn":     func(c Common) error { _, err := c.Turn(ctx, 1, now, now); return err },
		"PairGap":  func(c Common) error { _, err := c.PairGap(ctx, 1); return err },
		"Window":   func(c Common) error { _, err := c.ServiceWindow(ctx, 1); return err },
		"Guard":    func(c Common) error { _, err := c.RepeatGuard(ctx, 1); return err },
		"MaxCost":  func(c Common) error { _, err := c.MaxCost(ctx, 1); return err },
		"Other":    func(c Common) error { _, err := c.PairGap(ctx, 2); return err },
		"Begin":    func(c Common) error { return c.Begin(ctx, 1, now, time.Time{}) },
		"Served":   func(c Common) error { return c.SetServed(ctx, 1, 2) },
		"Idle":     func(c Common) error { return c.Idle(ctx, 1, now) },
		"Wrote":    func(c Common) error { c.Wrote(); return nil },
	}
	for _, tt := range []struct {
		name  string
		calls string
		reads int
	}{
		{"every part from one read", "Stopped Schedule Turn PairGap Window Guard MaxCost", 1},
		{"again after the start is recorded", "Stopped Schedule Begin Turn PairGap", 2},
		{"again after the served tokens", "Turn Served PairGap", 2},
		{"again after idleness", "PairGap Idle Window Idle Window", 3},
		{"again after a driver's write", "Stopped Wrote Stopped", 2},
		{"another campaign's row", "Stopped Other", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tx := &countingTx{}
			c := New(tx, dialect.SQLite)
			for _, name := range strings.Fields(tt.calls) {
				f, ok := look[name]
				if !ok {
					t.Fatalf("no call %q", name)
				}
				if err := f(c); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			if tx.campaignReads != tt.reads {
				t.Errorf("%s: campaign row read %d times, want %d", tt.calls, tx.campaignReads, tt.reads)
			}
		})
	}
}
