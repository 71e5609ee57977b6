package top

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/mattn/go-runewidth"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/golden"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

// t0 is when the seeded campaigns were imported.
var t0 = time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)

// fixture is a real database in a fixed state and a clock the test moves.
type fixture struct {
	st  *store.Store
	now time.Time
	c1  int64 // running: a live runner sends it
	c2  int64 // paused by the operator
}

// seed builds, through the store, campaign 1 running (a live runner sends
// it, sends recorded, one account cooling down after a throttle), campaign
// 2 paused, two accounts in a portfolio with a limit, and two webhook
// bodies waiting in the inbox.
func seed(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	fx := &fixture{now: t0}
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wasend.db"), driver.Options{Now: func() time.Time { return fx.now }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fx.st = st
	for _, a := range []campaign.Account{
		{Name: "main-01", PhoneNumberID: "1234567890", Tier: campaign.TierActive, TokenEnv: "WA_TOKEN_MAIN"},
		{Name: "warm-02", PhoneNumberID: "2345678901", Tier: campaign.TierWarm, TokenEnv: "WA_TOKEN_WARM"},
		{Name: "new-03", PhoneNumberID: "3456789012", Tier: campaign.TierNew, TokenEnv: "WA_TOKEN_NEW"},
	} {
		if _, err := st.AddAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.AddPortfolio(ctx, campaign.Portfolio{Name: "acme", PinnedLimit: 1000}); err != nil {
		t.Fatal(err)
	}
	acme := "acme"
	for _, name := range []string{"main-01", "warm-02"} {
		if _, err := st.UpdateAccount(ctx, name, campaign.AccountChange{Portfolio: &acme}); err != nil {
			t.Fatal(err)
		}
	}
	fx.c1 = fx.importList(t, "spring.csv", 0, 40)
	fx.c2 = fx.importList(t, "autumn.csv", 100, 10)
	for i := range 12 {
		fx.now = t0.Add(time.Minute + time.Duration(i)*time.Second)
		o := campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprintf("wamid.%02d", i), Class: "ok"}
		if i == 5 {
			o = campaign.Outcome{Kind: campaign.OutcomeRetry, ErrorCode: 130429, Class: "throttled", Error: "130429 Rate limit hit",
				Throttle: &campaign.Throttle{Cooldown: 10 * time.Minute}}
		}
		fx.send(t, fx.c1, o)
	}
	for i := range 2 {
		fx.now = t0.Add(time.Minute + time.Duration(20+i)*time.Second)
		fx.send(t, fx.c2, campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprintf("wamid.b%02d", i), Class: "ok"})
	}
	if _, err := st.PauseCampaign(ctx, fx.c2, campaign.PausedByOperator); err != nil {
		t.Fatal(err)
	}
	fx.now = t0.Add(90 * time.Second)
	if err := st.AddToInbox(ctx, [][]byte{[]byte(`{}`), []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	fx.now = t0.Add(2 * time.Minute)
	if err := st.RegisterRunner(ctx, campaign.Runner{ID: "runner-1", CampaignID: fx.c1, Host: "h", PID: 1,
		StartedAt: t0.Add(time.Minute), HeartbeatAt: fx.now.Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	return fx
}

func (fx *fixture) importList(t *testing.T, name string, from, n int) int64 {
	t.Helper()
	ctx := context.Background()
	im, err := fx.st.Import(ctx, campaign.Campaign{Name: name, Fingerprint: "fp-" + name, Source: name,
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "sale", Lang: "en_US"}})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	for i := range n {
		p := fmt.Sprintf("+491510000%04d", from+i)
		if _, err := im.Add(ctx, campaign.Message{Line: i + 2, Input: p, Phone: p}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := im.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// send claims one row of campaign id and records o for it.
func (fx *fixture) send(t *testing.T, id int64, o campaign.Outcome) {
	t.Helper()
	ctx := context.Background()
	cl, err := storetest.One(claim.New(fx.st).ClaimN(ctx, id, "runner-1", fx.now, 1))
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	if err := fx.st.RecordAll(ctx, "runner-1", []campaign.Result{{Claim: cl, Outcome: o, At: fx.now.Add(300 * time.Millisecond)}}); err != nil {
		t.Fatal(err)
	}
}

// model is the dashboard over the fixture's database, read as `wasend
// top` reads it (cmd/top.go: status's report, the inbox's backlog).
func (fx *fixture) model() *Model {
	reads := readmodel.New(fx.st)
	return New(context.Background(), Options{
		Status: func(ctx context.Context) (Reading, error) {
			out, err := report.Reporter{Src: fx.st, Reads: Reads(reads), Now: fx.now, Loc: time.UTC}.Status(ctx)
			return Reading{Status: out}, err
		},
		Inbox: reads.WebhookBacklog,
		Moves: fx.st,
		Now:   func() time.Time { return fx.now },
		Loc:   time.UTC,
	})
}

// screen is the view with the database's path, which differs each run,
// replaced.
func screen(m *Model, fx *fixture) string {
	return strings.ReplaceAll(m.View(), fx.st.Path(), "<db>") + "\n"
}

// TestViewGolden draws the dashboard at 80×24 and 120×30: campaign 1
// running with its pace over two refreshes 5 s apart, one account cooling
// down, the portfolio's reach, campaign 2 paused, the inbox behind. Every
// line fits the width, and the screen its height. Rewrite with: go test
// ./internal/top -run TestViewGolden -update
func TestViewGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 30}} {
		t.Run(fmt.Sprint(size[0]), func(t *testing.T) {
			fx := seed(t)
			m := fx.model()
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			m.Refresh()
			fx.now = fx.now.Add(5 * time.Second)
			for range 3 {
				fx.send(t, fx.c1, campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.x" + fmt.Sprint(fx.now.UnixNano()), Class: "ok"})
			}
			if err := fx.st.Heartbeat(context.Background(), "runner-1", fx.now); err != nil {
				t.Fatal(err)
			}
			m.Refresh()
			got := screen(m, fx)
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if len(lines) > size[1] {
				t.Errorf("%d lines on a screen of %d", len(lines), size[1])
			}
			for i, l := range lines {
				if w := runewidth.StringWidth(l); w > size[0] {
					t.Errorf("line %d is %d columns wide at %d: %q", i+1, w, size[0], l)
				}
			}
			for _, want := range []string{"running", "paused", "cooling down until", "acme", "2 waiting", "36/min"} {
				if !strings.Contains(got, want) {
					t.Errorf("no %q on the screen:\n%s", want, got)
				}
			}
			golden.Check(t, filepath.Join("testdata", fmt.Sprintf("top_%dx%d.golden", size[0], size[1])), got)
		})
	}
}
