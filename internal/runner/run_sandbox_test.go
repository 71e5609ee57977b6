package runner_test

import (
	"bytes"
	"context"
	"log/slog"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/ui"
	"github.com/wasend/wasend/internal/whatsapp"
)

// TestRunSandbox runs `campaign run --sandbox` as cmd does, in process:
// the sandbox with its status webhooks to the run's receiver, the template
// synced from it and checked, the preflight, the engine. The campaign ends
// with nothing open; run again, it is found done and nothing is sent. It
// runs against both versions the sandbox serves, the current and the one
// before (a set-up pinned to it by WASEND_API_VERSION).
func TestRunSandbox(t *testing.T) {
	for _, version := range []string{whatsapp.DefaultVersion, whatsapp.PreviousVersion} {
		t.Run(version, func(t *testing.T) { testRunSandbox(t, version) })
	}
}

func testRunSandbox(t *testing.T, version string) {
	ctx := context.Background()
	st := sandboxStore(t)
	opts := func(errOut *bytes.Buffer) runner.Options {
		o := sandboxRun(st, demoSpec, sandbox.WebhookOptions{Read: 0.5, Seed: 1}, errOut)
		o.API.Version = version
		return o
	}
	var errOut bytes.Buffer
	res, err := runner.Run(ctx, opts(&errOut))
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	if !res.Ran || res.Done || !res.Imported {
		t.Errorf("ran %v, done %v, imported %v; want a run of a new campaign", res.Ran, res.Done, res.Imported)
	}
	if res.Counts.Open() != 0 || res.Counts[campaign.Sent] == 0 {
		t.Errorf("counts after the run %v: want every row done, some sent", res.Counts)
	}
	for _, want := range []string{"SANDBOX (http://127.0.0.1:", "): nothing goes to WhatsApp", "synced ", "imported "} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("no %q in:\n%s", want, errOut.String())
		}
	}

	errOut.Reset()
	again, err := runner.Run(ctx, opts(&errOut))
	if err != nil {
		t.Fatalf("second run: %v\n%s", err, errOut.String())
	}
	if !again.Done || again.Ran || again.Campaign.ID != res.Campaign.ID || !maps.Equal(again.Counts, res.Counts) {
		t.Errorf("second run: done %v, ran %v, campaign %d with %v; want campaign %d done with %v",
			again.Done, again.Ran, again.Campaign.ID, again.Counts, res.Campaign.ID, res.Counts)
	}
}

// demoSpec is the sandbox demo's template campaign over
// testdata/recipients.csv.
var demoSpec = campaign.Spec{Kind: campaign.KindTemplate, Template: sandbox.DemoTemplate, Lang: "en_US", Params: []string{"name", "code"}}

// sandboxStore is a fresh store whose tiers send fast (1,000 a second),
// closed when t ends.
func sandboxStore(t *testing.T) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "sandbox.db"), driver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, tier := range []string{campaign.TierNew, campaign.TierWarm, campaign.TierActive} {
		if err := st.SetTier(ctx, tier, campaign.Limits{Rate: 1000, Burst: 100, DailyCap: 1000}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// sandboxRun are the options of `campaign run --sandbox` of spec over
// testdata/recipients.csv, as cmd makes them: the sandbox's status
// webhooks (hooks) to the run's receiver, its chatter to errOut.
func sandboxRun(st *store.Store, spec campaign.Spec, hooks sandbox.WebhookOptions, errOut *bytes.Buffer) runner.Options {
	return runner.Options{
		Store: st, IO: ui.Test(&bytes.Buffer{}, errOut), File: "../../testdata/recipients.csv", Location: time.UTC,
		Spec: spec, Region: "DE", Policy: runner.DefaultPolicy(), Timeout: 5 * time.Second, ProgressInterval: time.Hour,
		API: runner.APIConfig{Sandbox: true}, Logger: slog.New(slog.DiscardHandler),
		Webhooks: &runner.RunWebhooks{Path: "/webhook", Sandbox: hooks,
			Secrets: func() ([]byte, string, error) { return []byte("secret"), "verify", nil }},
	}
}
