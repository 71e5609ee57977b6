package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/ui"
)

// TestRunEndGolden holds what a piped `campaign run --sandbox` prints as
// it ends, one way of ending after another, and wants every line within
// 80 columns at counts under 100 000: a pipe does not wrap, but the
// terminal a log is read on does.
func TestRunEndGolden(t *testing.T) {
	at := time.Date(2026, 12, 2, 0, 52, 29, 0, time.UTC)
	c := campaign.Campaign{ID: 12, Skipped: 3, Schedule: campaign.Schedule{ExpireAfter: 2 * time.Hour}}
	counts := campaign.Counts{campaign.Sent: 41_234, campaign.Failed: 1_203, campaign.Unknown: 17, campaign.Pending: 2_000, campaign.Expired: 9}
	var b strings.Builder
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"finished", nil},
		{"interrupted", context.Canceled},
		{"paused", campaign.ErrPaused},
		{"cancelled", campaign.ErrCancelled},
		{"storage", fmt.Errorf("%w: disk full", driver.ErrStorage)},
		{"reach", &runner.ReachError{}},
		{"rescheduled", fmt.Errorf("%w until %s", runner.ErrRescheduled, at.Add(24*time.Hour).Format(time.RFC3339))},
		{"capped", runner.ErrCapped},
	} {
		var out, errOut bytes.Buffer
		f := &Factory{IO: ui.Test(&out, &errOut), Sandbox: true, Getenv: mapEnv(nil), Now: func() time.Time { return at }}
		err := printRunEnd(f, c, counts, tt.err, time.UTC)
		if (err == nil) != (tt.err == nil || errors.Is(tt.err, runner.ErrRescheduled)) {
			t.Errorf("%s: printRunEnd returned %v", tt.name, err)
		}
		fmt.Fprintf(&b, "## %s\n-- stdout\n%s-- stderr\n%s", tt.name, out.String(), errOut.String())
	}
	var out, errOut bytes.Buffer
	f := &Factory{IO: ui.Test(&out, &errOut), Sandbox: true, Getenv: mapEnv(nil)}
	printRunDelivery(f, &report.Delivery{Sent: 412_345, Delivered: 410_000, DeliveredRate: 0.9943, Read: 300_000, ReadRate: 0.7317,
		FailedAfterSend: 2_345, Replied: 12_000, ReplyRate: 0.0291, OptedOut: 321})
	fmt.Fprintf(&b, "## delivery\n-- stderr\n%s", errOut.String())
	got := b.String()
	goldenFile(t, "run_end.golden", got)
	for _, line := range strings.Split(got, "\n") {
		if w := runewidth.StringWidth(line); w > 80 {
			t.Errorf("%d columns: %s", w, line)
		}
	}
}
