package htmlreport

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
)

func TestCountries(t *testing.T) {
	got := countries([]readmodel.PhonePrefix{
		{Prefix: "+491512", Sample: "+4915123456789", Recipients: 5, Sent: 4, Failed: 1},
		{Prefix: "+491701", Sample: "+4917012345678", Recipients: 2, Sent: 2, Delivered: 2},
		{Prefix: "+120255", Sample: "+12025550123", Recipients: 3, Sent: 3},    // Washington, DC
		{Prefix: "+141655", Sample: "+14165550123", Recipients: 1, Sent: 1},    // Toronto
		{Prefix: "+447400", Sample: "+447400123456", Recipients: 1, Sent: 1},   // a UK mobile
		{Prefix: "+447911", Sample: "+447911123456", Recipients: 1, Sent: 1},   // Guernsey (Sure)
		{Prefix: "+777123", Sample: "+77712345678", Recipients: 1, Sent: 1},    // Kazakhstan
		{Prefix: "+791612", Sample: "+79161234567", Recipients: 1, Sent: 1},    // Russia
		{Prefix: "+999123", Sample: "+999123456789", Recipients: 2, Failed: 2}, // no such code
	})
	want := []struct {
		region, code   string
		recipients, ok int
	}{
		{"DE", "+49", 7, 6}, {"US", "+1", 3, 3}, {"ZZ", "+", 2, 0},
		{"CA", "+1", 1, 1}, {"GB", "+44", 1, 1}, {"GG", "+44", 1, 1}, {"KZ", "+7", 1, 1}, {"RU", "+7", 1, 1},
	}
	if len(got) != len(want) {
		t.Fatalf("countries = %+v", got)
	}
	for i, w := range want {
		g := got[i]
		if g.Region != w.region || g.Prefix != w.code || g.Recipients != w.recipients || g.Sent != w.ok {
			t.Errorf("country %d = %s %s %d recipients %d sent; want %s %s %d %d", i, g.Region, g.Prefix, g.Recipients, g.Sent,
				w.region, w.code, w.recipients, w.ok)
		}
	}
	if got[0].Delivered != 2 || got[0].Failed != 1 {
		t.Errorf("Germany's figures did not add up: %+v", got[0])
	}
}

func TestErrorOf(t *testing.T) {
	for _, tt := range []struct {
		code             int
		class, inMeaning string
		remedy           bool
	}{
		{0, "-", "suppressed", false},
		{131026, "permanent", "can never succeed", false},
		{132001, "campaign-fatal", "the campaign stopped", true},
		{190, "account-fatal", "needs a human", false},
		{130429, "throttled", "over its rate", false},
	} {
		e := errorOf(readmodel.ErrorGroup{Code: tt.code, Count: 3})
		if e.Class != tt.class || !strings.Contains(e.Meaning, tt.inMeaning) || (e.Remedy != "") != tt.remedy || e.Count != 3 {
			t.Errorf("code %d: %+v; want class %s, a meaning with %q, a remedy %v", tt.code, e, tt.class, tt.inMeaning, tt.remedy)
		}
	}
}

func TestTimelineChart(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		buckets []readmodel.TimelineBucket
		labels  []string
		marks   bool
	}{
		{nil, nil, false},
		{[]readmodel.TimelineBucket{{Sent: 4}}, []string{"03-02 09:00"}, true},
		{[]readmodel.TimelineBucket{{Sent: 4}, {Sent: 2, Failed: 1}}, []string{"03-02 09:00", "03-02 09:01"}, true},
		{make([]readmodel.TimelineBucket, 1500), []string{"03-02 09:00", "03-02 21:29", "03-03 09:59"}, false},
	} {
		c := timelineChart(readmodel.Timeline{Start: start, Step: time.Minute, Buckets: tt.buckets}, time.UTC)
		if c.Points != len(tt.buckets) {
			t.Errorf("%d buckets: %d points", len(tt.buckets), c.Points)
		}
		var labels []string
		for _, l := range c.XLabels {
			labels = append(labels, l.Text)
			if l.X < padL || l.X > padL+plotW {
				t.Errorf("%d buckets: label %s at %.1f, off the plot", len(tt.buckets), l.Text, l.X)
			}
		}
		if strings.Join(labels, ",") != strings.Join(tt.labels, ",") {
			t.Errorf("%d buckets: labels %v, want %v", len(tt.buckets), labels, tt.labels)
		}
		for _, s := range c.Series {
			if n := len(strings.Fields(s.Points)); n != len(tt.buckets) {
				t.Errorf("%d buckets: series %s has %d points", len(tt.buckets), s.Name, n)
			}
			if (len(s.Marks) > 0) != tt.marks {
				t.Errorf("%d buckets: series %s dotted: %v", len(tt.buckets), s.Name, len(s.Marks) > 0)
			}
		}
	}
}

// A report of two campaigns renders both side by side, with no reference
// to anything outside the page, and the cost section only when a cost is
// given.
func TestRender(t *testing.T) {
	camp := func(id int64, template string, cost *Cost) Campaign {
		return Campaign{
			Detail: readmodel.Detail{
				Campaign: campaign.Campaign{ID: id, Name: "c", Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: template, Lang: "en"}},
				Counts:   campaign.Counts{campaign.Sent: 3, campaign.Failed: 1},
			},
			State: "finished", Reported: true, Delivery: readmodel.DeliveryFigures{Sent: 3, Delivered: 2, Read: 1, Replied: 1},
			Errors: []Error{errorOf(readmodel.ErrorGroup{Code: 131026, Count: 1, Sample: "<b>x</b>"})},
			Cost:   cost,
		}
	}
	rep := Report{Campaigns: []Campaign{camp(1, "a", nil), camp(2, "a", &Cost{Currency: "EUR", Estimate: "0.40", Actual: "0.25",
		Lines: []CostLine{{Market: "Germany", Category: "marketing", Price: "0.10", Rows: 4, Estimate: "0.40", Delivered: 3, Free: 1, Actual: "0.25"}}})}, Generated: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	var buf bytes.Buffer
	if err := Render(&buf, rep); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{`id="side-by-side"`, `data-campaign-id="1"`, `data-campaign-id="2"`, "Campaigns 1 and 2",
		`<tr data-template="a"><td>a</td><td class="text">en</td><td class="text">1, 2</td><td>8</td><td>6</td>`,
		"&lt;b&gt;x&lt;/b&gt;", `data-figure="cost.actual" data-value="0.25"`, `data-figure="cost.estimate" data-value="0.40"`,
		`data-figure="cost.currency" data-value="EUR"`,
		"<tr><td>Cost estimate</td><td>-</td><td>0.40 EUR</td></tr>", "<tr><td>Actual cost</td><td>-</td><td>0.25 EUR</td></tr>",
		"<tr><td>Germany</td><td class=\"text\">marketing</td><td>0.10</td><td>4</td><td>0.40</td><td>3</td><td>1</td><td>0.25</td></tr>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<h3>Cost</h3>"); n != 1 {
		t.Errorf("%d cost sections, want 1 (campaign 2's)", n)
	}
	if m := regexp.MustCompile(`(?i)(src|href)\s*=|url\(|@import|<script|<link`).FindString(page); m != "" {
		t.Errorf("the page refers outside itself: %q", m)
	}
}

func TestNum(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1\u202f000", 1234567: "1\u202f234\u202f567", -1500: "-1\u202f500"} {
		if got := num(n); got != want {
			t.Errorf("num(%d) = %q, want %q", n, got, want)
		}
	}
}
