package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pgtest"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
	"github.com/wasend/wasend/internal/webhook"
)

// costCLI is a CLI against a sandbox answering after 20 ms (so several
// requests are in flight at once), with fast tiers, the sandbox's
// templates synced, and a USD card pricing Germany at 0.10 and the United
// Kingdom at 0.05 a marketing message.
func costCLI(t *testing.T) (*cli, *sandbox.Server) {
	return costCLIWith(t, sandbox.Options{PairInterval: -1, Latency: sandbox.Latency{Base: 20 * time.Millisecond}})
}

const costCard = "Market,Currency,Marketing,Utility,Authentication\nGermany,USD,0.10,0.02,0.02\nUnited Kingdom,USD,0.05,0.01,0.01\n"

func costCLIWith(t *testing.T, o sandbox.Options) (*cli, *sandbox.Server) {
	t.Helper()
	return costCLIOn(t, "", o)
}

// costCLIOn is costCLIWith on the database db ("": a file of the test's).
func costCLIOn(t *testing.T, db string, o sandbox.Options) (*cli, *sandbox.Server) {
	t.Helper()
	box := sandbox.New(o)
	srv := httptest.NewServer(box)
	t.Cleanup(srv.Close)
	c := newCLI(t)
	if db != "" {
		c.db = db
	}
	c.env["WASEND_API_BASE"] = srv.URL
	c.env["WA_TOKEN_MAIN"], c.env["WA_TOKEN_FRESH"], c.env["WASEND_TOKEN"] = "main-token", "fresh-token", "waba-token"
	c.addAccounts()
	for _, tier := range []string{"new", "active"} {
		c.ok("tier", "set", tier, "--rate", "1000", "--burst", "100", "--daily-cap", "10000")
	}
	c.ok("template", "sync", "--waba", "102290129340398")
	dir := t.TempDir()
	card := filepath.Join(dir, "card.csv")
	write(t, card, costCard)
	c.ok("pricing", "import", card, "--effective", "2025-07-01")
	return c, box
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// costList writes n recipients alternating Germany (0.10) and the United
// Kingdom (0.05), Germany first.
func costList(t *testing.T, n int) string {
	var b strings.Builder
	b.WriteString("phone,name\n")
	for i := range n {
		if i%2 == 0 {
			fmt.Fprintf(&b, "+4915100%06d,A\n", i)
		} else {
			fmt.Fprintf(&b, "+447700%06d,B\n", i)
		}
	}
	list := filepath.Join(t.TempDir(), "list.csv")
	write(t, list, b.String())
	return list
}

// acceptedCost is what the sandbox accepted, priced by the card.
func acceptedCost(box *sandbox.Server) (n int, micros int64) {
	for phone, k := range box.Accepted() {
		n += k
		if strings.HasPrefix(phone, "+49") {
			micros += int64(k) * 100_000
		} else {
			micros += int64(k) * 50_000
		}
	}
	return n, micros
}

// TestRunMaxCost: with 8 workers and requests in flight, the run stops
// claiming before accepted + in flight passes --max-cost, exits 8 and says
// how far it got; the sandbox accepted exactly the rows the budget holds,
// never more. --resume keeps the budget; a raised one continues; 0 removes
// it. The same on SQLite and on Postgres.
func TestRunMaxCost(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testRunMaxCost(t, "") })
	t.Run("postgres", func(t *testing.T) { testRunMaxCost(t, pgtest.Start(t).NewDB(t, "")) })
}

func testRunMaxCost(t *testing.T, db string) {
	c, box := costCLIOn(t, db, sandbox.Options{PairInterval: -1, Latency: sandbox.Latency{Base: 20 * time.Millisecond}})
	list := costList(t, 40)
	send := []string{"--template", "spring_sale", "--lang", "en_US", "--params", "name", "--workers", "8"}

	_, errOut, err := c.run(append([]string{"campaign", "run", list, "--max-cost", "1USD"}, send...)...)
	if !errors.Is(err, campaign.ErrBudget) || exitCode(err, io.Discard) != ExitBudget {
		t.Fatalf("run: %v (exit %d), want the budget's exit %d\n%s", err, exitCode(err, io.Discard), ExitBudget, errOut)
	}
	// DE, UK, DE, …: 13 rows are exactly 1.00; the 14th (UK) would pass it.
	if n, cost := acceptedCost(box); n != 13 || cost != 1_000_000 {
		t.Errorf("accepted %d messages costing %d µUSD, want 13 costing exactly 1.00", n, cost)
	}
	for _, want := range []string{"budget is reached", "13 of 40 sent", "--resume 1 --max-cost"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in %q", want, err)
		}
	}
	// status and cost read the spend from the store: 1.00 of 1.00.
	var status struct {
		Campaigns []struct{ Cost report.CampaignCost }
	}
	if err := json.Unmarshal([]byte(c.ok("status", "--json")), &status); err != nil {
		t.Fatal(err)
	}
	if want := (report.CampaignCost{Currency: "USD", Estimate: "3.00", Actual: "0.00", Budget: "1.00", Committed: "1.00"}); len(status.Campaigns) != 1 ||
		status.Campaigns[0].Cost != want {
		t.Errorf("status --json: %+v, want one campaign costing %+v", status.Campaigns, want)
	}
	var cost struct{ Budget report.BudgetDetail }
	if err := json.Unmarshal([]byte(c.ok("cost", "1", "--json")), &cost); err != nil {
		t.Fatal(err)
	}
	if want := (report.BudgetDetail{Max: "1.00", Currency: "USD", Committed: "1.00"}); cost.Budget != want {
		t.Errorf("cost --json budget: %+v, want %+v", cost.Budget, want)
	}

	// The budget is kept: a resume without --max-cost sends nothing.
	if _, _, err := c.run(append([]string{"campaign", "run", "--resume", "1"}, send[6:]...)...); !errors.Is(err, campaign.ErrBudget) {
		t.Errorf("resume with the stored budget: %v, want ErrBudget", err)
	}
	if n, _ := acceptedCost(box); n != 13 {
		t.Errorf("resume with the stored budget sent %d more", n-13)
	}
	// Raised to 2.00: 1.00 + 6 × 0.15 + 0.05 = 1.95, the next DE passes.
	if _, _, err := c.run(append([]string{"campaign", "run", "--resume", "1", "--max-cost", "2"}, send[6:]...)...); !errors.Is(err, campaign.ErrBudget) {
		t.Errorf("resume with 2.00: %v, want ErrBudget", err)
	}
	if n, cost := acceptedCost(box); n != 26 || cost != 1_950_000 {
		t.Errorf("after 2.00: %d accepted costing %d µUSD, want 26 costing 1.95", n, cost)
	}
	c.ok(append([]string{"campaign", "run", "--resume", "1", "--max-cost", "0"}, send[6:]...)...)
	if n, _ := acceptedCost(box); n != 40 {
		t.Errorf("without a budget: %d accepted, want all 40", n)
	}
	for phone, k := range box.Accepted() {
		if k != 1 {
			t.Errorf("%s accepted %d times", phone, k)
		}
	}
}

// TestCostActualAndReconcile: the sandbox's status webhooks carry pricing
// (the template's category, regular); once applied, wasend cost prints the
// estimate (every row × the card) beside the actual cost (the delivered
// messages × the card, failed ones at zero), and --reconcile finds Meta's
// pricing_analytics (the sandbox's, from what it delivered, priced by the
// same card) equal: a difference of zero.
func TestCostActualAndReconcile(t *testing.T) {
	secret := []byte("app-secret")
	var rcv *webhook.Receiver
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rcv.ServeHTTP(w, r) }))
	t.Cleanup(hook.Close)
	card, err := pricing.ParseCard("card.csv", strings.NewReader(costCard))
	if err != nil {
		t.Fatal(err)
	}
	card.Effective = time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)
	c, box := costCLIWith(t, sandbox.Options{PairInterval: -1, Card: &card,
		Webhooks: sandbox.WebhookOptions{URL: hook.URL, AppSecret: secret, Seed: 3, Read: 0.5, Fail: 0.2}})
	c.ok("account", "set", "main-01", "--waba-id", "102290129340398")
	st, err := store.Open(t.Context(), c.db, driver.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rcv = webhook.NewReceiver(webhook.ReceiverConfig{Inbox: st, AppSecret: secret})
	go rcv.Run(t.Context())

	c.ok("campaign", "run", costList(t, 20), "--template", "spring_sale", "--lang", "en_US", "--params", "name")
	if n := box.FlushWebhooks(); n != 0 {
		t.Fatalf("%d webhook posts failed", n)
	}
	if _, err := webhook.NewApplier(st, webhook.Policy{}, nil, nil).Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The figures below come from counts kept as statuses came (migration
	// 0050): they equal a recount from the rows.
	if err := storetest.CheckCounts(t.Context(), st.Reader()); err != nil {
		t.Fatal(err)
	}
	var want pricing.Micros
	delivered := 0
	for _, d := range box.Deliveries() {
		if d.Final == "failed" {
			continue
		}
		if d.Category != "marketing" || d.PricingType != pricing.TypeRegular {
			t.Errorf("delivery %s priced %s/%s, want marketing/regular", d.To, d.Category, d.PricingType)
		}
		delivered++
		want += map[bool]pricing.Micros{true: 100_000, false: 50_000}[strings.HasPrefix(d.To, "+49")]
	}
	if delivered == 0 || delivered == 20 {
		t.Fatalf("%d of 20 delivered: the seed should fail some", delivered)
	}

	var got struct {
		Currency string
		Estimate struct{ Total string }
		Actual   struct {
			Total string
			Lines []struct {
				Market   string
				Messages int64
			}
		}
		Reconcile struct {
			Lines []struct {
				Delivered  int64 `json:"delivered"`
				MetaVolume int64 `json:"meta_volume"`
			}
			CostDifference string `json:"cost_difference"`
		}
	}
	if err := json.Unmarshal([]byte(c.ok("cost", "1", "--reconcile", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if got.Currency != "USD" || got.Estimate.Total != "1.50" || got.Actual.Total != want.String() {
		t.Errorf("cost: %s, estimate %s (want 1.50: 10 × 0.10 + 10 × 0.05), actual %s (want %s)", got.Currency, got.Estimate.Total, got.Actual.Total, want)
	}
	var n int64
	for _, l := range got.Actual.Lines {
		n += l.Messages
	}
	if n != int64(delivered) {
		t.Errorf("actual counts %d messages, the sandbox delivered %d", n, delivered)
	}
	if got.Reconcile.CostDifference != "0.00" || len(got.Reconcile.Lines) != 2 {
		t.Errorf("reconcile: %+v, want 2 lines and no difference", got.Reconcile)
	}
	for _, l := range got.Reconcile.Lines {
		if l.Delivered != l.MetaVolume {
			t.Errorf("reconcile line %+v: volumes differ", l)
		}
	}
	// status --json and show --json carry the same figures; export each
	// delivered row's cost, adding up to the actual cost.
	var status struct {
		Campaigns []struct{ Cost report.CampaignCost }
	}
	if err := json.Unmarshal([]byte(c.ok("status", "--json")), &status); err != nil {
		t.Fatal(err)
	}
	var show struct{ Cost report.CampaignCost }
	if err := json.Unmarshal([]byte(c.ok("campaign", "show", "1", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	wantBrief := report.CampaignCost{Currency: "USD", Estimate: "1.50", Actual: want.String()}
	if len(status.Campaigns) != 1 || status.Campaigns[0].Cost != wantBrief || show.Cost != wantBrief {
		t.Errorf("status --json cost %+v, show --json cost %+v; want %+v", status.Campaigns, show.Cost, wantBrief)
	}
	var sum pricing.Micros
	costed := 0
	for _, r := range parseExport(t, c.ok("campaign", "export", "1")) {
		if r["cost"] == "" {
			continue
		}
		m, err := pricing.ParseMicros(r["cost"])
		if err != nil || r["pricing_category"] != "marketing" || r["pricing_type"] != "regular" {
			t.Errorf("export row %v", r)
		}
		sum += m
		costed++
	}
	if sum != want || costed != delivered {
		t.Errorf("export: %d rows costing %v, want %d costing %v", costed, sum, delivered, want)
	}

	// On a terminal: the table and the totals.
	c.tty = true
	out := c.ok("cost", "1")
	for _, want := range []string{"MARKET", "Germany", "United Kingdom", "estimate: 1.50 USD; actual: " + want.String() + " USD"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// TestCheckEstimate: check prices the file's valid rows by the card in
// force and the template's synced category, exactly, and names the rows
// whose market the card lacks; plan says the same, piped as records.
func TestCheckEstimate(t *testing.T) {
	c, _ := costCLI(t)
	list := costList(t, 20)
	f, err := os.OpenFile(list, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "+34612345678,C\n+34612345679,D\nnot a number,E")
	f.Close()
	args := []string{list, "--template", "spring_sale", "--lang", "en_US", "--params", "name"}
	var got struct {
		Valid int
		Cost  struct {
			Category string
			Estimate struct {
				Total    string
				Unpriced []pricing.Unpriced
			}
		}
	}
	if err := json.Unmarshal([]byte(c.ok(append([]string{"campaign", "check", "--json"}, args...)...)), &got); err != nil {
		t.Fatal(err)
	}
	if got.Valid != 22 || got.Cost.Category != "marketing" || got.Cost.Estimate.Total != "1.50" ||
		len(got.Cost.Estimate.Unpriced) != 1 || got.Cost.Estimate.Unpriced[0].Market != "Spain" || got.Cost.Estimate.Unpriced[0].Messages != 2 {
		t.Errorf("check --json: %+v; want 22 valid, 1.50 for 10 × 0.10 + 10 × 0.05, Spain's 2 unpriced", got)
	}
	out := c.ok(append([]string{"campaign", "check"}, args...)...)
	for _, want := range []string{"cost estimate: 1.50 USD (marketing", "10 × 0.10       Germany marketing = 1.00", "2 not priced: Spain, marketing: market not on the card", "free rule: "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in check's output:\n%s", want, out)
		}
	}
	out = c.ok(append([]string{"campaign", "plan"}, args...)...)
	for _, want := range []string{"kind=cost estimate=1.50 currency=USD", "kind=cost_line market=Germany category=marketing messages=10", "kind=unpriced market=Spain"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in plan's records:\n%s", want, out)
		}
	}
}

// TestPricingImportRefuses: a card with a missing column, a negative or
// non-numeric price or an unknown currency is refused naming the file,
// line and column, and one whose dates overlap a card of its currency
// naming the file and that card; nothing of a refused card is stored.
func TestPricingImportRefuses(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.csv")
	write(t, good, costCard)
	c.ok("pricing", "import", good, "--effective", "2025-07-01")
	const head = "Market,Currency,Marketing,Utility,Authentication\n"
	for _, tc := range []struct{ name, csv, effective, want string }{
		{"missing column", "Market,Currency,Marketing,Authentication\nBrazil,USD,0.06,0.01\n", "2026-01-01", "missing-column.csv:1: no Utility column"},
		{"negative", head + "Brazil,USD,0.06,-0.01,0.01\n", "2026-01-01", `negative.csv:2:4 (Utility): "-0.01" is negative`},
		{"not a number", head + "Brazil,USD,0.06,zero,0.01\n", "2026-01-01", `not-a-number.csv:2:4 (Utility): "zero" is not a number`},
		{"unknown currency", head + "Brazil,XYZ,0.06,0.01,0.01\n", "2026-01-01", `unknown-currency.csv:2:2 (Currency): unknown currency "XYZ"`},
		{"overlap", costCard, "2025-07-01", "overlap.csv: the USD card from 2025-07-01 overlaps another card's dates: card 1"},
	} {
		file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".csv")
		write(t, file, tc.csv)
		code, msg := c.exit("pricing", "import", file, "--effective", tc.effective)
		if code == 0 || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: exit %d, %q; want an error with %q", tc.name, code, msg, tc.want)
		}
	}
	var cards []struct{ ID int64 }
	if err := json.Unmarshal([]byte(c.ok("pricing", "list", "--json")), &cards); err != nil || len(cards) != 1 {
		t.Errorf("cards after the refusals: %s, %v; want the good one alone", c.ok("pricing", "list", "--json"), err)
	}
}

// TestAccountListAPI: account list shows each account's --api (cloud when
// it has none) and its WABA's onboarding to the Marketing Messages API as
// template sync read it; an account whose WABA was never read says so.
func TestAccountListAPI(t *testing.T) {
	c, _ := costCLIWith(t, sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{Marketing: map[string]string{"102290129340398": "PENDING"}}})
	if rows := c.table("account", "list"); len(rows) != 2 || rows[0]["API"] != "" {
		t.Fatalf("before any --api or WABA: %v; want no API column", rows)
	}
	c.ok("account", "set", "main-01", "--waba-id", "102290129340398", "--api", "auto")
	c.ok("template", "sync")
	got := map[string]string{}
	for _, r := range c.table("account", "list") {
		got[r["NAME"]] = r["API"]
	}
	if got["main-01"] != "auto, MM pending" || got["fresh-02"] != "cloud, MM not read" {
		t.Errorf("API column = %v; want main-01 auto, MM pending and fresh-02 cloud, MM not read", got)
	}
}
