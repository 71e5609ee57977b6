package readmodel_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

// The same moves made on SQLite and on Postgres leave every read model
// answering the same: each is read on both and the answers compared. On
// either alone (no postgres here) each must answer without an error.
// PortfolioWindows is left to its own test: pgstore has no portfolios
// yet.
func TestReadModelsAgree(t *testing.T) {
	answers := map[string]map[string]string{}
	eachBackend(t, func(t *testing.T, b backend) {
		clk := newFakeClock()
		st := b.open(t, clk)
		ids := seedForReads(t, st, clk)
		answers[b.name] = readEverything(t, readmodel.New(st), ids, clk.Now())
	})
	lite, pg := answers["sqlite"], answers["postgres"]
	if testing.Verbose() {
		for name, a := range lite {
			t.Logf("%s: %s", name, a)
		}
	}
	if lite == nil || pg == nil {
		return
	}
	names := make([]string, 0, len(lite))
	for name := range lite {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if lite[name] != pg[name] {
			t.Errorf("%s:\n  sqlite   %s\n  postgres %s", name, lite[name], pg[name])
		}
	}
}

// seedForReads makes, through the store's moves, what the read models
// read: two accounts, a campaign played to sent, failed, throttled,
// unknown, dropped and in-flight rows (detailOutcome), a runner holding
// it, an outage, skipped rows, a suppressed number, a campaign deleted
// after it sent. It returns the played campaign's id and the
// one with skipped rows'.
func seedForReads(t *testing.T, st driver.Driver, clk interface{ Set(time.Time) }) (ids [2]int64) {
	t.Helper()
	ctx := t.Context()
	storetest.MustAccount(t, st, "a", campaign.TierActive, storetest.Limited(1, 4, 100))
	storetest.MustAccount(t, st, "b", campaign.TierActive, storetest.Limited(1, 4, 100))
	c, _ := playCampaign(t, st, 9, detailOutcome)
	ids[0] = c.ID
	if err := st.RegisterRunner(ctx, campaign.Runner{ID: "r1", CampaignID: c.ID, Host: "h", PID: 42, StartedAt: t0, HeartbeatAt: at(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetOutage(ctx, c.ID, campaign.Outage{Since: at(time.Minute), Error: "502 Bad Gateway", NextProbe: at(2 * time.Minute)}, ""); err != nil {
		t.Fatal(err)
	}

	im := startImport(t, st, "skips", storetest.Phone(20))
	defer im.Rollback()
	for _, line := range []int{3, 4} {
		if err := im.Skip(ctx, line, fmt.Sprint("bad ", line), "not a phone number"); err != nil {
			t.Fatal(err)
		}
	}
	im.SetKeys("source-key", "recipients-key")
	skips, err := im.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids[1] = skips.ID

	// A campaign that sent, then deleted: its sends are still screened.
	gone := importOne(t, st, "gone", storetest.Phone(30))
	storetest.MustAccount(t, st, "g", campaign.TierActive, storetest.Limited(1, 4, 100))
	clk.Set(at(time.Hour))
	cl := mustOne(t, st, gone.ID, at(time.Hour))
	if err := st.RecordAll(ctx, "r1", []campaign.Result{{Claim: cl, Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.gone"}, At: at(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteCampaign(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Suppress(ctx, []campaign.Suppression{{Phone: storetest.Phone(3), Reason: "STOP"}}); err != nil {
		t.Fatal(err)
	}
	clk.Set(at(2 * time.Hour))
	return ids
}

// readEverything reads every read model but PortfolioWindows, each answer
// (or error) as JSON by the read model's name and arguments.
func readEverything(t *testing.T, r *readmodel.Reader, ids [2]int64, now time.Time) map[string]string {
	t.Helper()
	ctx := t.Context()
	c, skips := ids[0], ids[1]
	out := map[string]string{}
	put := func(name string, v any, err error) {
		if err != nil {
			if !strings.HasSuffix(name, " unknown") {
				t.Errorf("%s: %v", name, err)
			}
			v = "error: " + err.Error()
		}
		b, jerr := json.Marshal(v)
		if jerr != nil {
			t.Fatalf("%s: %v", name, jerr)
		}
		out[name] = string(b)
	}
	put2 := func(name string) func(v any, err error) { return func(v any, err error) { put(name, v, err) } }

	put2("Campaigns")(r.Campaigns(ctx))
	put2("CampaignBySource")(r.CampaignBySource(ctx, "source-key"))
	put2("CampaignBySource unknown")(r.CampaignBySource(ctx, "nothing"))
	put2("ContactedWithin")(r.ContactedWithin(ctx, 3*time.Hour))
	put2("SentTemplateWithin")(r.SentTemplateWithin(ctx, "hello", 3*time.Hour))
	put2("CampaignDelivery")(r.CampaignDelivery(ctx, c))
	put2("AccountDelivery all")(r.AccountDelivery(ctx, 0))
	put2("AccountDelivery")(r.AccountDelivery(ctx, c))
	put2("StaleUnknown")(r.StaleUnknown(ctx, c, time.Minute))
	var rows []readmodel.ExportRow
	put("ExportMessages", &rows, r.ExportMessages(ctx, c, "", func(e readmodel.ExportRow) error { rows = append(rows, e); return nil }))
	var failed []readmodel.ExportRow
	put("ExportMessages failed", &failed, r.ExportMessages(ctx, c, campaign.Failed, func(e readmodel.ExportRow) error { failed = append(failed, e); return nil }))
	put2("WebhookBacklog")(r.WebhookBacklog(ctx))
	put2("CountLinks")(r.CountLinks(ctx))
	put2("LinkedIn")(r.LinkedIn(ctx, []string{storetest.Phone(0), "US.1"}))
	links, mark, err := r.LinksLearnedAfter(ctx, readmodel.LinkMark{}, 10)
	put("LinksLearnedAfter", []any{links, mark}, err)
	put2("MarketingStatuses")(r.MarketingStatuses(ctx))
	put2("LimitsWait")(r.LimitsWait(ctx, c))
	put2("StickyBreaks")(r.StickyBreaks(ctx, c))
	put2("WebhookInboxReasons")(r.WebhookInboxReasons(ctx, t0))
	put2("CountSuppressions")(r.CountSuppressions(ctx))
	put2("Templates")(r.Templates(ctx))
	put2("Outage")(r.Outage(ctx, c))
	put2("Outage unknown")(r.Outage(ctx, 99))
	put2("Cards")(r.Cards(ctx))
	put2("CampaignBudget")(r.CampaignBudget(ctx, c))
	put2("Charges")(r.Charges(ctx, c))
	put2("CostCounts")(r.CostCounts(ctx, c))
	put2("ChargeCounts")(r.ChargeCounts(ctx, c))
	put2("CampaignStats")(r.CampaignStats(ctx, c))
	put2("DroppedAccounts")(r.DroppedAccounts(ctx, c))
	put2("FailedMessages")(r.FailedMessages(ctx, c))
	put2("AccountActivity")(r.AccountActivity(ctx, t0))
	put2("Activity")(r.Activity(ctx, t0, c))
	put2("CampaignQueue")(r.CampaignQueue(ctx, c))
	put2("Skipped")(r.Skipped(ctx, skips))
	put2("OpenZones")(r.OpenZones(ctx, c))
	put2("LiveRunners")(r.LiveRunners(ctx, campaign.Liveness{Stale: 3 * time.Hour}, now))
	put2("Holders")(r.Holders(ctx, c, ""))
	for _, seg := range []campaign.Segment{{Kind: campaign.SegmentNotDelivered}, {Kind: campaign.SegmentDeliveredNotRead},
		{Kind: campaign.SegmentRead}, {Kind: campaign.SegmentReplied}, {Kind: campaign.SegmentNotReplied},
		{Kind: campaign.SegmentFailed, Code: 131026}} {
		put2("SegmentRows " + seg.String())(r.SegmentRows(ctx, c, seg))
	}
	put2("LastInbound")(r.LastInbound(ctx, []string{storetest.Phone(0), "US.1"}))
	put2("CampaignDetail")(r.CampaignDetail(ctx, c))
	put2("Suppressions")(r.Suppressions(ctx))
	put2("OptInsSinceSuppressed")(r.OptInsSinceSuppressed(ctx))
	put2("TierHistory")(r.TierHistory(ctx, "a"))
	put2("Tiers")(r.Tiers(ctx))
	l, tokens, on, err := r.GlobalLimit(ctx)
	put("GlobalLimit", []any{l, tokens, on}, err)
	put2("TierProgress")(r.TierProgress(ctx))
	put2("CampaignTimeline")(r.CampaignTimeline(ctx, c, 100))
	put2("PhonePrefixes")(r.PhonePrefixes(ctx, c, 12))
	put2("WroteSince")(r.WroteSince(ctx, t0.Add(-24*time.Hour)))
	return out
}

// mustOne claims one row of campaign id at now.
func mustOne(t *testing.T, st driver.Driver, id int64, now time.Time) campaign.Claim {
	t.Helper()
	cl, err := storetest.One(claim.New(st).ClaimN(t.Context(), id, "r1", now, 1))
	if err != nil {
		t.Fatalf("claim at +%v: %v", now.Sub(t0), err)
	}
	return cl
}

// startImport starts the import of campaign name (template "hello") with
// one row to phone, on line 2.
func startImport(t *testing.T, st driver.Driver, name, phone string) driver.Importer {
	t.Helper()
	im, err := st.Import(t.Context(), campaign.Campaign{Name: name, Fingerprint: "fp-" + name, Source: name + ".csv",
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "hello", Lang: "en_US", Params: []string{"name"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := im.Add(t.Context(), campaign.Message{Line: 2, Input: phone, Phone: phone, Params: []string{"P"}}); err != nil {
		im.Rollback()
		t.Fatal(err)
	}
	return im
}

// importOne imports campaign name with one row to phone.
func importOne(t *testing.T, st driver.Driver, name, phone string) campaign.Campaign {
	t.Helper()
	im := startImport(t, st, name, phone)
	defer im.Rollback()
	c, err := im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
