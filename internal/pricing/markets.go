package pricing

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"strings"
)

// markets.csv is Meta's country → market table by calling code, read from
// its pricing page on the date its header gives.
//
//go:embed markets.csv
var marketsCSV string

// Place is where a number is billed: its country, and the market (a
// country of its own, or a regional group like "Rest of Africa") a card
// bills it at when it has no row for the country.
type Place struct {
	Code    string // the calling code matched, without "+"
	Country string
	Market  string
	ISO     string // ISO 3166 alpha-2, as pricing_analytics names countries ("" for Other)
}

// Markets maps calling codes to places, longest prefix first.
type Markets struct {
	byCode map[string]Place
	byISO  map[string]Place
	maxLen int
}

// Other is the market of a number whose calling code the table lacks.
const Other = "Other"

// DefaultMarkets is the table wasend ships with.
func DefaultMarkets() *Markets {
	m, err := ParseMarkets(marketsCSV)
	if err != nil {
		panic(fmt.Sprintf("pricing: the embedded markets table: %v", err)) // a build defect, caught by the tests
	}
	return m
}

// ParseMarkets reads a code,country,market,iso table; # lines are comments.
func ParseMarkets(text string) (*Markets, error) {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	recs, err := csv.NewReader(strings.NewReader(strings.Join(lines, "\n"))).ReadAll()
	if err != nil {
		return nil, err
	}
	m := &Markets{byCode: map[string]Place{}, byISO: map[string]Place{}}
	for i, r := range recs {
		if i == 0 {
			continue // the header
		}
		if len(r) != 4 || !digits(r[0]) || r[1] == "" || r[2] == "" || len(r[3]) != 2 {
			return nil, fmt.Errorf("row %d: want code,country,market,iso, got %q", i+1, r)
		}
		if _, dup := m.byCode[r[0]]; dup {
			return nil, fmt.Errorf("row %d: code %s listed twice", i+1, r[0])
		}
		p := Place{Code: r[0], Country: r[1], Market: r[2], ISO: r[3]}
		m.byCode[r[0]] = p
		if _, seen := m.byISO[p.ISO]; !seen {
			m.byISO[p.ISO] = p
		}
		m.maxLen = max(m.maxLen, len(r[0]))
	}
	return m, nil
}

// Lookup is the place of an E.164 number ("+447700900123" or without the
// plus): the longest calling code that prefixes it, or Other.
func (m *Markets) Lookup(phone string) Place {
	d := strings.TrimPrefix(phone, "+")
	for n := min(m.maxLen, len(d)); n > 0; n-- {
		if p, ok := m.byCode[d[:n]]; ok {
			return p
		}
	}
	return Place{Country: Other, Market: Other}
}

// PrefixLen is how many characters of a number NumberPrefix keeps: a plus
// and four digits, the longest calling code in the table (its test holds
// the table to it), so a number's prefix has the number's place.
const PrefixLen = 5

// NumberPrefix is the first PrefixLen characters of phone, as SQL's
// substr(phone, 1, 5) gives them: the key the store keeps a campaign's
// rows by, for the estimate and the actual cost by market.
func NumberPrefix(phone string) string {
	n := 0
	for i := range phone {
		if n == PrefixLen {
			return phone[:i]
		}
		n++
	}
	return phone
}

// ByISO is the place of a country by its ISO 3166 code (as
// pricing_analytics gives it), or Other.
func (m *Markets) ByISO(code string) Place {
	code = strings.ToUpper(code)
	if code == "CA" { // +1, North America with the United States
		code = "US"
	}
	if p, ok := m.byISO[code]; ok {
		return p
	}
	return Place{Country: Other, Market: Other}
}
