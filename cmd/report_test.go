package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/wasend/wasend/internal/sandbox"
)

// seedReported is seedCampaign with what webhooks said since: two rows
// delivered, one read, one answered.
func seedReported(t *testing.T, c *cli) {
	t.Helper()
	seedCampaign(t, c.db)
	c.now = showT0.Add(48 * time.Hour)
	at := showT0.Add(2 * time.Hour)
	c.ok("webhook", "import", statusFile(t,
		statusLine(t, "wamid.HBgL02", "delivered", "4915100000000", "", at, 0),
		statusLine(t, "wamid.HBgL03", "read", "4915100000001", "", at, 0),
		inboundLine(t, "+4915100000000", "wamid.in1", at.Add(time.Minute), "text", textMsg("Yes please", "wamid.HBgL02")),
	))
}

// The page of a fixed campaign, whole: its structure, figures and charts
// change only on purpose.
func TestReportHTMLGolden(t *testing.T) {
	c := newCLI(t)
	seedReported(t, c)
	out, errOut, err := c.run("report", "1", "--html", "-")
	if err != nil || errOut != "" {
		t.Fatalf("report: %v\n%s", err, errOut)
	}
	goldenFile(t, "report.html", out)
	assertSelfContained(t, out)
}

// externalRef finds what a browser would fetch: a src or href to a URL
// (absolute, or protocol-relative), a CSS url() or @import, a script.
var externalRef = regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:|//)|url\(|@import|<script|<link|<img|<iframe`)

func assertSelfContained(t *testing.T, page string) {
	t.Helper()
	if m := externalRef.FindString(page); m != "" {
		t.Errorf("the page refers outside itself (%q)", m)
	}
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.HasSuffix(page, "</html>\n") {
		t.Errorf("the page is not one whole HTML document")
	}
}

func TestReportFlags(t *testing.T) {
	c := newCLI(t)
	seedReported(t, c)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "1"}, "--html FILE is required"},
		{[]string{"report", "--html", "-"}, "give the campaign ID"},
		{[]string{"report", "1", "2", "3", "--html", "-"}, "accepts at most 2 arg(s)"},
		{[]string{"report", "x", "--html", "-"}, `campaign ID "x": must be a positive number`},
		{[]string{"report", "1", "1", "--html", "-"}, "campaign 1 given twice"},
	} {
		if got := c.usage(tt.args...); !strings.Contains(got, tt.want) {
			t.Errorf("wasend %s: %q, want %q in it", strings.Join(tt.args, " "), got, tt.want)
		}
	}
	if _, _, err := c.run("report", "9", "--html", "-"); err == nil || !strings.Contains(err.Error(), "campaign 9") {
		t.Errorf("an unknown campaign: %v", err)
	}
	dir := t.TempDir()
	if _, _, err := c.run("report", "1", "--html", filepath.Join(dir, "none", "r.html")); err == nil ||
		!strings.Contains(err.Error(), "--html "+filepath.Join(dir, "none", "r.html")+": directory "+filepath.Join(dir, "none")+" does not exist") {
		t.Errorf("a missing directory: %v", err)
	}
	file := filepath.Join(dir, "r.html")
	_, errOut, err := c.run("report", "1", "--html", file)
	if err != nil || !strings.Contains(errOut, "wrote the report of campaign 1 to "+file) {
		t.Fatalf("report to a file: %v\n%s", err, errOut)
	}
	written, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if stdout := c.ok("report", "1", "--html", "-"); string(written) != stdout {
		t.Errorf("the file and stdout differ")
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
}

// chromium finds a Chromium or Chrome to drive, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium installed (apt-get install chromium): the HTML report's browser test skips")
	return ""
}

// pageFigures is what the browser reads off a report: per campaign, its
// data-figure values, its charts' bars and points.
type pageFigures struct {
	Figures    map[string]string `json:"figures"`
	FunnelBars []struct {
		Step  string  `json:"step"`
		Value int     `json:"value"`
		Width float64 `json:"width"` // as laid out
	} `json:"funnelBars"`
	TimelinePoints int `json:"timelinePoints"`
	Series         map[string]struct {
		Points int `json:"points"` // parsed by the browser
		Total  int `json:"total"`
	} `json:"series"`
}

const readPage = `(() => {
  const out = {};
  for (const s of document.querySelectorAll('section.campaign')) {
    const figures = {};
    s.querySelectorAll('[data-figure]').forEach(e => {
      figures[e.dataset.figure] = e.dataset.value !== undefined ? e.dataset.value : e.textContent.trim();
    });
    const funnelBars = [...s.querySelectorAll('svg.funnel rect.bar')].map(r =>
      ({step: r.dataset.step, value: +r.dataset.value, width: r.getBoundingClientRect().width}));
    const tl = s.querySelector('svg.timeline');
    const series = {};
    if (tl) tl.querySelectorAll('polyline').forEach(p => {
      series[p.dataset.series] = {points: p.points.numberOfItems, total: +p.dataset.total};
    });
    out[s.dataset.campaignId] = {figures, funnelBars, timelinePoints: tl ? +tl.dataset.points : 0, series};
  }
  return out;
})()`

// openInBrowser loads file in headless Chromium and returns what readPage
// read. A console error or warning, an exception, or a request for
// anything but the file fails the test.
func openInBrowser(t *testing.T, file string) map[string]pageFigures {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1400, 1000))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	var (
		mu               sync.Mutex
		problems, loaded []string
	)
	listen := func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value))
				}
				problems = append(problems, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			what := ev.ExceptionDetails.Text
			if x := ev.ExceptionDetails.Exception; x != nil {
				what += " " + x.Description
			}
			problems = append(problems, fmt.Sprintf("exception: %s (line %d)", what, ev.ExceptionDetails.LineNumber))
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				problems = append(problems, fmt.Sprintf("log %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			loaded = append(loaded, ev.Request.URL)
		}
	}
	if err := chromedp.Listen(bctx, listen); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+file), chromedp.WaitVisible(chromedp.CSS("section.campaign"))); err != nil {
		t.Fatalf("chromium on %s: %v", file, err)
	}
	got, err := chromedp.Run(bctx, chromedp.Evaluate[map[string]pageFigures](readPage))
	if err != nil {
		t.Fatalf("read the page in chromium: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("in the browser: %s", p)
	}
	for _, u := range loaded {
		if u != "file://"+file {
			t.Errorf("the page requested %s", u)
		}
	}
	return got
}

// showFigures flattens show --json to the page's figure names.
func showFigures(s showJSON) map[string]string {
	out := map[string]string{
		"state": s.State, "imported": strconv.Itoa(s.Imported), "skipped": strconv.Itoa(s.Skipped),
		"timing.attempts": strconv.Itoa(s.Timing.Attempts), "timing.not_sent": strconv.Itoa(s.Timing.NotSent),
	}
	for k, v := range s.Counts {
		out["counts."+k] = strconv.Itoa(v)
	}
	if d := s.Delivery; d != nil {
		for k, v := range map[string]int{"sent": d.Sent, "delivered": d.Delivered, "read": d.Read, "replied": d.Replied,
			"opted_out": d.OptedOut, "failed_after_send": d.FailedAfterSend} {
			out["delivery."+k] = strconv.Itoa(v)
		}
	}
	for _, a := range s.Accounts {
		for k, v := range map[string]int{"sent": a.Sent, "failed": a.Failed, "unknown": a.Unknown, "attempts": a.Attempts, "throttled": a.Throttled} {
			out["accounts."+a.Account+"."+k] = strconv.Itoa(v)
		}
	}
	for _, e := range s.Errors {
		out["errors."+strconv.Itoa(e.Code)+".count"] = strconv.Itoa(e.Count)
	}
	if c := s.Cost; c != nil {
		for k, v := range map[string]string{"currency": c.Currency, "estimate": c.Estimate, "actual": c.Actual,
			"budget": c.Budget, "accepted_or_in_flight": c.Committed, "not_priced": c.NotPriced} {
			if v != "" {
				out["cost."+k] = v
			}
		}
	}
	return out
}

// The report of a campaign sent through the sandbox, with its webhooks
// (delivered, read, replied), opened in headless Chromium: no console
// error or exception, nothing requested but the file, the funnel's four
// bars and the timeline's points there, and every figure the page
// carries equal to campaign show --json's.
func TestReportInBrowser(t *testing.T) {
	chromium(t)
	c := newCLI(t)
	for _, tier := range []string{"new", "warm", "active"} {
		c.ok("tier", "set", tier, "--rate", "1000", "--burst", "100")
	}
	if _, errOut, err := c.run("campaign", "run", "--sandbox", "../testdata/recipients.csv", "--log-level", "error"); err != nil {
		t.Fatalf("sandbox run: %v\n%s", err, errOut)
	}
	c.ok("pricing", "import", writeCard(t), "--effective", "2025-07-01", "--sandbox")
	file := filepath.Join(t.TempDir(), "report.html")
	c.ok("report", "1", "--html", file, "--sandbox")
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	assertSelfContained(t, string(page))

	got := openInBrowser(t, file)
	var show showJSON
	if err := json.Unmarshal([]byte(c.ok("campaign", "show", "1", "--json", "--sandbox")), &show); err != nil {
		t.Fatal(err)
	}
	if show.Delivery == nil || show.Delivery.Delivered == 0 || show.Delivery.Read == 0 || show.Delivery.Replied == 0 {
		t.Fatalf("the sandbox's webhooks reported too little to test with: %+v", show.Delivery)
	}
	if show.Cost == nil || show.Cost.Actual == "" || show.Cost.Actual == "0.00" {
		t.Fatalf("the delivered messages cost nothing to test with: %+v", show.Cost)
	}
	p, ok := got["1"]
	if !ok {
		t.Fatalf("no campaign 1 in the page: %v", got)
	}
	checkPage(t, p, show)
}

// Two campaigns side by side in the browser: the seeded one (failures by
// three codes, throttles, a dropped account, webhooks) and one imported
// but never sent; each part of the page equals its own show --json.
func TestReportPairInBrowser(t *testing.T) {
	chromium(t)
	c := newCLI(t)
	seedReported(t, c)
	csv := filepath.Join(t.TempDir(), "summer.csv")
	if err := os.WriteFile(csv, []byte("phone,name,code\n+4915100000100,A,X\n+12025550123,B,Y\n+447911123456,C,Z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok("campaign", "import", csv, "--template", "summer_sale", "--lang", "de", "--params", "name,code")
	// A card, and the sandbox's templates: campaign 1's spring_sale is
	// priced as marketing, campaign 2's summer_sale (de) is not known.
	srv := httptest.NewServer(sandbox.New(sandbox.Options{}))
	t.Cleanup(srv.Close)
	c.env["WASEND_API_BASE"], c.env["WASEND_TOKEN"] = srv.URL, "waba-token"
	c.ok("template", "sync", "--waba", "102290129340398")
	c.ok("pricing", "import", writeCard(t), "--effective", "2025-07-01")
	file := filepath.Join(t.TempDir(), "pair.html")
	c.ok("report", "1", "2", "--html", file)
	got := openInBrowser(t, file)
	if len(got) != 2 {
		t.Fatalf("%d campaigns in the page, want 2", len(got))
	}
	var shows [2]showJSON
	for i, id := range []string{"1", "2"} {
		if err := json.Unmarshal([]byte(c.ok("campaign", "show", id, "--json")), &shows[i]); err != nil {
			t.Fatal(err)
		}
		checkPage(t, got[id], shows[i])
	}
	one, two := shows[0].Cost, shows[1].Cost
	if one == nil || one.Estimate == "" || two == nil || two.NotPriced == "" {
		t.Fatalf("want campaign 1 priced and campaign 2 not: %+v, %+v", one, two)
	}
	// Side by side, each cell is its campaign's show --json cost.
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{
		"<tr><td>Cost estimate</td><td>" + one.Estimate + " " + one.Currency + "</td><td>not priced</td></tr>",
		"<tr><td>Actual cost</td><td>" + one.Actual + " " + one.Currency + "</td><td>not priced</td></tr>",
	} {
		if !strings.Contains(string(page), row) {
			t.Errorf("the side-by-side table lacks %s", row)
		}
	}
}

// reportCard is a USD rate card pricing the markets of
// testdata/recipients.csv's first lines.
const reportCard = "Market,Currency,Marketing,Utility,Authentication\nGermany,USD,0.10,0.02,0.02\n" +
	"United Kingdom,USD,0.05,0.01,0.01\nNorth America,USD,0.025,0.004,0.004\n"

func writeCard(t *testing.T) string {
	t.Helper()
	card := filepath.Join(t.TempDir(), "card.csv")
	write(t, card, reportCard)
	return card
}

// checkPage holds a campaign's part of the page to its show --json.
func checkPage(t *testing.T, p pageFigures, show showJSON) {
	t.Helper()
	want := showFigures(show)
	for k, v := range want {
		if p.Figures[k] != v {
			t.Errorf("campaign %d: page %s = %q, show --json %q", show.ID, k, p.Figures[k], v)
		}
	}
	for k, v := range p.Figures {
		if _, ok := want[k]; !ok {
			t.Errorf("campaign %d: page has %s = %q, show --json has no such figure", show.ID, k, v)
		}
	}

	// Without a webhook the funnel still shows what was sent.
	wantBars := map[string]int{"sent": show.Counts["sent"]}
	if d := show.Delivery; d != nil {
		wantBars = map[string]int{"sent": d.Sent, "delivered": d.Delivered, "read": d.Read, "replied": d.Replied}
	}
	if len(p.FunnelBars) != 4 {
		t.Errorf("campaign %d: %d funnel bars, want 4", show.ID, len(p.FunnelBars))
	}
	for _, b := range p.FunnelBars {
		if b.Value != wantBars[b.Step] {
			t.Errorf("campaign %d: funnel %s = %d, want %d", show.ID, b.Step, b.Value, wantBars[b.Step])
		}
		if (b.Value > 0) != (b.Width > 0) {
			t.Errorf("campaign %d: funnel %s of %d is %.1f px wide", show.ID, b.Step, b.Value, b.Width)
		}
	}

	if show.Timing.FirstAttempt == nil {
		if p.TimelinePoints != 0 || len(p.Series) != 0 {
			t.Errorf("campaign %d: never sent, yet a timeline of %d points", show.ID, p.TimelinePoints)
		}
		return
	}
	// One point a minute from the first request to the last answer (the
	// last answer may fall in the minute after its request's).
	first, last := show.Timing.FirstAttempt.Truncate(time.Minute), show.Timing.LastAttempt.Truncate(time.Minute)
	span := int(last.Sub(first)/time.Minute) + 1
	if p.TimelinePoints != span && p.TimelinePoints != span-1 {
		t.Errorf("campaign %d: %d timeline points, want %d (a minute each from %v to %v)", show.ID, p.TimelinePoints, span, first, last)
	}
	throttled := 0
	for _, a := range show.Accounts {
		throttled += a.Throttled
	}
	for name, total := range map[string]int{"throttled": throttled, "failed": show.Counts["failed"], "sent": -1} {
		s, ok := p.Series[name]
		if !ok {
			t.Errorf("campaign %d: no %s series in the timeline", show.ID, name)
			continue
		}
		if s.Points != p.TimelinePoints {
			t.Errorf("campaign %d: the %s series has %d points, the timeline %d", show.ID, name, s.Points, p.TimelinePoints)
		}
		if total >= 0 && s.Total != total {
			t.Errorf("campaign %d: the %s series adds up to %d, show --json %d", show.ID, name, s.Total, total)
		}
	}
}
