package runner_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/ui"
)

// TestProgressETAIsStatus: the progress line's time left is the ETA status
// shows (issue 26: the line said "21 min left", from the pace, while status
// said about 9 days, from the caps). The sandbox's three numbers may send 2
// messages a day each: the run sends 6 of the 40 and stops at the caps, on
// a simulated clock; its last line then says the days status says.
func TestProgressETAIsStatus(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	clk := clock.NewSim(t0)
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "sandbox.db"), driver.Options{Now: clk.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tier := range []string{campaign.TierNew, campaign.TierWarm, campaign.TierActive} {
		if err := st.SetTier(ctx, tier, campaign.Limits{Rate: 1000, Burst: 100, DailyCap: 2}); err != nil {
			t.Fatal(err)
		}
	}
	policy := runner.DefaultPolicy()
	policy.StopWhenCapped = true
	var errOut bytes.Buffer
	_, err = runner.Run(ctx, runner.Options{
		Store: st, IO: ui.Test(&bytes.Buffer{}, &errOut), File: "../../testdata/recipients.csv", Location: time.UTC,
		Spec:   campaign.Spec{Kind: campaign.KindTemplate, Template: "wasend_demo", Lang: "en_US", Params: []string{"name", "code"}},
		Region: "DE", Policy: policy, Timeout: 5 * time.Second, ProgressInterval: time.Hour,
		API: runner.APIConfig{Sandbox: true}, Logger: slog.New(slog.DiscardHandler), Clock: clk, Now: clk.Now,
	})
	if err == nil {
		t.Fatalf("the run did not stop at the caps:\n%s", errOut.String())
	}
	camps, err := report.Reporter{Src: st, Reads: readmodel.New(st), Now: clk.Now(), Loc: time.UTC}.Campaigns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eta := camps[0].ETA
	left, ok := eta.Left()
	if !ok || eta.QuotaResets < 5 {
		t.Fatalf("status's ETA %+v: want days of quota resets", eta)
	}
	var last string
	for _, l := range strings.Split(strings.TrimSpace(errOut.String()), "\n") {
		if strings.Contains(l, " left=") {
			last = l
		}
	}
	want := " eta=" + ui.CompactDuration(left.Round(time.Second))
	if !strings.Contains(last, want) || !strings.Contains(want, "d") {
		t.Errorf("last progress line %q, want it to say %q as status does (%s)", last, want, eta.Text)
	}
}
