package pricing

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseMicros(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Micros
		err  string
	}{
		{"0.0625", 62500, ""},
		{"12", 12_000_000, ""},
		{"1,234.5", 1_234_500_000, ""},
		{".5", 500_000, ""},
		{"0.000001", 1, ""},
		{"-0.01", 0, "negative"},
		{"abc", 0, "not a number"},
		{"1.2.3", 0, "not a number"},
		{"0.0000001", 0, "more than 6 decimals"},
		{"", 0, "empty"},
	} {
		got, err := ParseMicros(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseMicros(%q) = %v, %v; want error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseMicros(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for m, want := range map[Micros]string{62500: "0.0625", 12_500_000: "12.50", 0: "0.00", -1: "-0.000001"} {
		if got := m.String(); got != want {
			t.Errorf("Micros(%d).String() = %q, want %q", int64(m), got, want)
		}
	}
}

func TestMarketsLookup(t *testing.T) {
	m := DefaultMarkets()
	for _, tc := range []struct{ phone, country, market string }{
		{"+14155550100", "North America", "North America"},
		{"+18765550100", "Jamaica", "Rest of Latin America"},
		{"+447700900123", "United Kingdom", "United Kingdom"},
		{"+77012345678", "Kazakhstan", Other},
		{"+74951234567", "Russia", "Russia"},
		{"+2348012345678", "Nigeria", "Nigeria"},
		{"+263771234567", "Zimbabwe", "Rest of Africa"},
		{"+34612345678", "Spain", "Spain"},
		{"+8801712345678", "Bangladesh", "Rest of Asia Pacific"},
		{"+999123", Other, Other},
		{"", Other, Other},
	} {
		p := m.Lookup(tc.phone)
		if p.Country != tc.country || p.Market != tc.market {
			t.Errorf("Lookup(%q) = %+v, want %s in %s", tc.phone, p, tc.country, tc.market)
		}
		if p.ISO != "" && m.ByISO(p.ISO).Country != p.Country {
			t.Errorf("ByISO(%s) = %+v, want %s", p.ISO, m.ByISO(p.ISO), p.Country)
		}
	}
}

func fixture(t *testing.T) Card {
	t.Helper()
	f, err := os.Open("testdata/card.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := ParseCard("testdata/card.csv", f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseCard(t *testing.T) {
	c := fixture(t)
	if c.Currency != "USD" || len(c.Rates) != 7 {
		t.Fatalf("card: %s, %d markets", c.Currency, len(c.Rates))
	}
	if p, ok := c.Price("India", AuthenticationInternational); !ok || p != 28000 {
		t.Errorf("India authentication-international = %v, %v", p, ok)
	}
	if _, ok := c.Price("Brazil", AuthenticationInternational); ok {
		t.Error("n/a read as a price")
	}
}

func TestParseCardRefuses(t *testing.T) {
	const head = "Market,Currency,Marketing,Utility,Authentication\n"
	for _, tc := range []struct {
		name, csv, want string
	}{
		{"missing column", "Market,Currency,Marketing,Authentication\nBrazil,USD,0.06,0.01\n", "card.csv:1: no Utility column"},
		{"negative", head + "Brazil,USD,0.06,0.01,0.01\nIndia,USD,0.01,-0.001,0.001\n", `card.csv:3:4 (Utility): "-0.001" is negative`},
		{"not a number", head + "Brazil,USD,0.06,zero,0.01\n", `card.csv:2:4 (Utility): "zero" is not a number`},
		{"unknown currency", head + "Brazil,XYZ,0.06,0.01,0.01\n", `card.csv:2:2 (Currency): unknown currency "XYZ"`},
		{"two currencies", head + "Brazil,USD,0.06,0.01,0.01\nIndia,EUR,0.01,0.01,0.01\n", "card.csv:3:2 (Currency): currency EUR"},
		{"market twice", head + "Brazil,USD,0.06,0.01,0.01\nBrazil,USD,0.06,0.01,0.01\n", `card.csv:3:1 (Market): market "Brazil" listed twice`},
		{"no rows", head, "no market rows"},
		{"no header", "a,b\nc,d\n", "no header line with a Market column"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCard("card.csv", strings.NewReader(tc.csv))
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want an InputError with %q", err, tc.want)
			}
		})
	}
}

// TestEstimateFixture: the estimate of a campaign is Σ rows × the card's
// price, exactly, per market × category; rows the card cannot price are
// counted and named.
func TestEstimateFixture(t *testing.T) {
	card := fixture(t)
	rows := []struct {
		phone string
		cat   Category
		n     int64
	}{
		{"+5511987654321", Marketing, 1000},   // Brazil 0.0625
		{"+919812345678", Marketing, 2500},    // India 0.0107
		{"+919812345678", Utility, 40},        // India 0.0014
		{"+14155550100", Marketing, 333},      // North America 0.0250
		{"+18765550100", Marketing, 7},        // Jamaica → Rest of Latin America 0.0740
		{"+447700900123", Authentication, 11}, // United Kingdom 0.0358
		{"+34612345678", Marketing, 5},        // Spain: not on the card
		{"+5511987654321", Service, 3},        // no service column
	}
	c := NewCounter(DefaultMarkets(), &card)
	for _, r := range rows {
		c.Count(r.phone, r.cat, r.n)
	}
	got := c.Cost()
	want := map[Key]Micros{
		{"Brazil", Marketing}:                1000 * 62500,
		{"India", Marketing}:                 2500 * 10700,
		{"India", Utility}:                   40 * 1400,
		{"North America", Marketing}:         333 * 25000,
		{"Rest of Latin America", Marketing}: 7 * 74000,
		{"United Kingdom", Authentication}:   11 * 35800,
	}
	var total Micros
	for _, l := range got.Lines {
		w, ok := want[Key{l.Market, l.Category}]
		if !ok || l.Cost != w {
			t.Errorf("line %s/%s = %v, want %v", l.Market, l.Category, l.Cost, w)
		}
		total += w
		delete(want, Key{l.Market, l.Category})
	}
	if len(want) > 0 {
		t.Errorf("lines missing: %v", want)
	}
	if got.Total != total || got.Total.String() != "98.5428" {
		t.Errorf("total = %v, want %v (98.5428)", got.Total, total)
	}
	if len(got.Unpriced) != 2 || got.Unpriced[0].Market != "Brazil" || got.Unpriced[0].Category != Service ||
		got.Unpriced[1].Market != "Spain" || got.Unpriced[1].Messages != 5 {
		t.Errorf("unpriced = %+v", got.Unpriced)
	}
}

func TestTiersAndCharge(t *testing.T) {
	card := fixture(t)
	f, _ := os.Open("testdata/tiers.csv")
	defer f.Close()
	if err := ParseTiers("testdata/tiers.csv", f, &card); err != nil {
		t.Fatal(err)
	}
	c := NewCounter(DefaultMarkets(), &card)
	c.Charge("+919812345678", Utility, true) // free: not counted toward a tier
	c.Count("+919812345678", Utility, 5)     // 3 × 0.0014 + 2 × 0.0010
	got := c.Cost()
	if len(got.Lines) != 1 || got.Lines[0].Cost != 3*1400+2*1000 || got.Lines[0].Free != 1 || got.Lines[0].Messages != 6 {
		t.Errorf("lines = %+v", got.Lines)
	}
	bad := "Market,Category,From,To,Price\nIndia,Utility,2,,0.001\n"
	if err := ParseTiers("t.csv", strings.NewReader(bad), &card); err == nil || !strings.Contains(err.Error(), "t.csv:2:3 (From): tier starts at 2, want 1") {
		t.Errorf("gap: %v", err)
	}
}

// TestPriceRange holds a range's price to PriceAt summed message by
// message, across the tiers' edges and past the last.
func TestPriceRange(t *testing.T) {
	card := fixture(t)
	f, _ := os.Open("testdata/tiers.csv")
	defer f.Close()
	if err := ParseTiers("testdata/tiers.csv", f, &card); err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		market string
		cat    Category
	}{{"India", Utility}, {"India", Marketing}, {"Nowhere", Utility}} {
		for from := int64(1); from <= 6; from++ {
			for n := int64(0); n <= 6; n++ {
				var want Micros
				for i := from; i < from+n; i++ {
					p, _ := card.PriceAt(k.market, k.cat, i)
					want += p
				}
				if got := card.PriceRange(k.market, k.cat, from, n); got != want {
					t.Errorf("PriceRange(%s, %s, %d, %d) = %d, want %d", k.market, k.cat, from, n, got, want)
				}
			}
		}
	}
}

// TestNumberPrefix: a number's first PrefixLen characters have its place,
// for every calling code in the table (none is longer than four digits).
func TestNumberPrefix(t *testing.T) {
	m := DefaultMarkets()
	if m.maxLen+1 > PrefixLen {
		t.Fatalf("the table has a %d-digit calling code; PrefixLen %d must hold it and the plus", m.maxLen, PrefixLen)
	}
	for code := range m.byCode {
		for _, phone := range []string{"+" + code + "98765432", code + "98765432", "+" + code} {
			if got, want := m.Lookup(NumberPrefix(phone)), m.Lookup(phone); got != want {
				t.Errorf("Lookup(NumberPrefix(%s)) = %+v, want %+v", phone, got, want)
			}
		}
	}
	for in, want := range map[string]string{"+447700900123": "+4477", "+1": "+1", "": "", "+44é77": "+44é7"} {
		if got := NumberPrefix(in); got != want {
			t.Errorf("NumberPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestInForceAndOverlap(t *testing.T) {
	d := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	cards := []Card{
		{ID: 1, Currency: "USD", Effective: d("2025-07-01")},
		{ID: 2, Currency: "USD", Effective: d("2026-10-01")},
		{ID: 3, Currency: "EUR", Effective: d("2025-07-01"), Until: d("2026-01-01")},
	}
	for _, tc := range []struct {
		cur, at string
		want    int64
	}{
		{"USD", "2026-09-30", 1}, {"USD", "2026-10-01", 2}, {"EUR", "2025-12-31", 3}, {"EUR", "2026-01-01", 0}, {"USD", "2025-06-30", 0},
	} {
		c := InForceOn(cards, tc.cur, d(tc.at).Add(13*time.Hour))
		if (c == nil && tc.want != 0) || (c != nil && c.ID != tc.want) {
			t.Errorf("%s on %s: %v, want card %d", tc.cur, tc.at, c, tc.want)
		}
	}
	if _, _, found := Overlap(cards); found {
		t.Error("no overlap found as one")
	}
	for _, extra := range []Card{
		{ID: 4, Currency: "USD", Effective: d("2026-10-01")},
		{ID: 5, Currency: "EUR", Effective: d("2025-12-01")},
		{ID: 6, Currency: "USD", Effective: d("2026-01-01"), Until: d("2026-11-01")},
	} {
		if _, _, found := Overlap(append(cards[:3:3], extra)); !found {
			t.Errorf("card %d: overlap not found", extra.ID)
		}
	}
}

func TestRowPrice(t *testing.T) {
	card := fixture(t)
	m := DefaultMarkets()
	if p := RowPrice(m, &card, "+5511987654321", Marketing); p != 62500 {
		t.Errorf("Brazil marketing = %v", p)
	}
	if p := RowPrice(m, &card, "+34612345678", Marketing); p != 136500 {
		t.Errorf("Spain (not on the card) = %v, want the highest marketing price 0.1365", p)
	}
}

// TestRulesByDate: the free rules said beside an estimate are those in
// force on its date: in-window utility templates free before 2026-10-01,
// billed from that day.
func TestRulesByDate(t *testing.T) {
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 9, 30, 23, 59, 0, 0, time.UTC), "utility templates in a customer service window: free"},
		{time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), "utility templates in a customer service window: billed"},
	} {
		got := strings.Join(Rules(tc.at), "\n")
		if !strings.Contains(got, tc.want) || !strings.Contains(got, "free entry point window") {
			t.Errorf("Rules(%s) =\n%s\nwant %q and the free entry point", tc.at.Format(time.DateOnly), got, tc.want)
		}
	}
}
