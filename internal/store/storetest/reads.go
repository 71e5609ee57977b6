package storetest

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
)

// What a driver keeps for others to read: the synced templates, and the
// sends the repeat guard reads through the read models on Reader.

func (s suite) readTests() []sub {
	return []sub{
		{"templates replaced per WABA", s.testTemplates},
		{"the repeat guard's window", s.testSentTemplateWithin},
	}
}

// testTemplates: a sync replaces one WABA's templates, those deleted at
// Meta included, and leaves another WABA's alone.
func (s suite) testTemplates(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	tpl := func(waba, name, status string) campaign.Template {
		return campaign.Template{WABA: waba, Name: name, Language: "en_US", Status: status, Category: "MARKETING",
			ParameterFormat: "POSITIONAL", Components: `[{"type":"BODY","text":"Hi {{1}}"}]`}
	}
	steps := []struct {
		waba string
		ts   []campaign.Template
		want []string // waba/name/status, in order
	}{
		{"w1", []campaign.Template{tpl("w1", "spring", "APPROVED"), tpl("w1", "autumn", "PENDING")}, []string{"w1/autumn/PENDING", "w1/spring/APPROVED"}},
		{"w2", []campaign.Template{tpl("w2", "hello", "APPROVED")}, []string{"w1/autumn/PENDING", "w1/spring/APPROVED", "w2/hello/APPROVED"}},
		{"w1", []campaign.Template{tpl("w1", "spring", "PAUSED")}, []string{"w1/spring/PAUSED", "w2/hello/APPROVED"}},
	}
	for i, s := range steps {
		clk.Set(at(time.Duration(i) * time.Minute))
		if err := st.ReplaceTemplates(t.Context(), s.waba, s.ts); err != nil {
			t.Fatal(err)
		}
		got, err := readmodel.New(st).Templates(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, g := range got {
			names = append(names, g.WABA+"/"+g.Name+"/"+g.Status)
			if g.Components != s.ts[0].Components || g.Language != "en_US" {
				t.Errorf("step %d: stored %+v", i, g)
			}
			if g.WABA == s.waba && !g.SyncedAt.Equal(clk.Now()) {
				t.Errorf("step %d: %s synced at %v, want the driver's clock", i, g.Name, g.SyncedAt)
			}
		}
		if len(names) != len(s.want) {
			t.Fatalf("step %d: templates %v, want %v", i, names, s.want)
		}
		for j := range names {
			if names[j] != s.want[j] {
				t.Errorf("step %d: templates %v, want %v", i, names, s.want)
				break
			}
		}
	}
}

// testSentTemplateWithin: the numbers a template was sent to within a
// window of the driver's clock, read by the read models over Reader.
func (s suite) testSentTemplateWithin(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "guard", 3) // template "hello"
	for i, when := range []time.Duration{0, time.Hour} {
		cl := mustClaim(t, st, c.ID, "r1", at(when))
		if err := record(t, st, cl, "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid." + Phone(i)}, at(when)); err != nil {
			t.Fatal(err)
		}
	}
	mustClaim(t, st, c.ID, "r1", at(time.Hour)) // in flight: not sent yet
	clk.Set(at(2 * time.Hour))
	for _, tt := range []struct {
		template string
		within   time.Duration
		want     map[string]time.Time
	}{
		{"hello", 3 * time.Hour, map[string]time.Time{Phone(0): t0, Phone(1): at(time.Hour)}},
		{"hello", 90 * time.Minute, map[string]time.Time{Phone(1): at(time.Hour)}},
		{"hello", 30 * time.Minute, map[string]time.Time{}},
		{"other", 3 * time.Hour, map[string]time.Time{}},
	} {
		got, err := readmodel.New(st).SentTemplateWithin(t.Context(), tt.template, tt.within)
		if err != nil {
			t.Fatal(err)
		}
		ok := len(got) == len(tt.want)
		for p, when := range tt.want {
			if g, found := got[p]; !found || !g.At.Equal(when) || g.CampaignID != c.ID {
				ok = false
			}
		}
		if !ok {
			t.Errorf("%s within %v: %v, want %v", tt.template, tt.within, got, tt.want)
		}
	}
}
