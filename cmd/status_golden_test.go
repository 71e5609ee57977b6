package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/ui"
)

// TestStatusGolden renders `status` for a terminal, a pipe and --json from
// a seeded database: a campaign with sent, failed, throttled, unknown,
// in-flight and pending rows, one account dropped, running again so it has
// an ETA. Rewrite with: go test ./cmd -run TestStatusGolden -update
func TestStatusGolden(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	now := showT0.Add(time.Hour)
	st, err := store.Open(context.Background(), c.db, store.Options{Now: func() time.Time { return now }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetCampaignState(context.Background(), 1, campaign.CampaignRunning, ""); err != nil {
		t.Fatal(err)
	}
	st.Close()
	c.now = now
	for _, tt := range []struct {
		name string
		tty  bool
		args []string
	}{
		{"status_tty.golden", true, nil},
		{"status_piped.golden", false, nil},
		{"status_json.golden", false, []string{"--json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.t, c.tty = t, tt.tty
			out, _, err := c.run(append([]string{"status"}, tt.args...)...)
			if err != nil {
				t.Fatalf("status: %v", err)
			}
			goldenFile(t, tt.name, strings.ReplaceAll(out, c.db, "<db>"))
		})
	}
}

// TestStatusWatch: --watch prints the status again every interval until
// the context ends (Ctrl-C), and then exits cleanly.
func TestStatusWatch(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	var out, errOut bytes.Buffer
	f := &Factory{IO: ui.Test(&out, &errOut), Getenv: mapEnv(c.env), Now: time.Now}
	root := NewRootCmd(f)
	root.SetArgs([]string{"--db", c.db, "status", "--watch=50ms"})
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("status --watch ended with %v, want a clean exit on Ctrl-C", err)
	}
	if n := strings.Count(out.String(), "main-01"); n < 2 {
		t.Errorf("status printed %d time(s) in 400ms at a 50ms interval, want several:\n%s", n, out.String())
	}
}
