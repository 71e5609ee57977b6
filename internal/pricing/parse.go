package pricing

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// InputError says where a card file is wrong: its file, line and column
// (1-based; the column is the field's number, 0 when the whole line is
// at fault).
type InputError struct {
	File         string
	Line, Column int
	Header       string // the column's header, when known
	Err          error
}

func (e *InputError) Error() string {
	at := fmt.Sprintf("%s:%d", e.File, e.Line)
	if e.Column > 0 {
		at += fmt.Sprintf(":%d", e.Column)
	}
	if e.Header != "" {
		at += fmt.Sprintf(" (%s)", e.Header)
	}
	return fmt.Sprintf("%s: %v", at, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

// maxPreamble is how many lines before the header a card may have (Meta's
// downloads open with a title line or two).
const maxPreamble = 10

// ParseCard reads a rate card in Meta's CSV shape: a header with Market,
// Currency and one column per category (Marketing, Utility, Authentication
// required; Authentication-International and Service when the card has
// them), then a row per market. A cell of "n/a", "-" or nothing is a
// category the market is not billed in. One currency per card. The card's
// dates are the caller's.
func ParseCard(file string, r io.Reader) (Card, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	at := func(col int, header string, err error) error {
		// The column is the field's number (a spreadsheet's), not a byte.
		line, _ := cr.FieldPos(max(col-1, 0))
		return &InputError{File: file, Line: line, Column: col, Header: header, Err: err}
	}
	var (
		header []string
		cols   = map[string]int{} // market, currency, or a category: its index
	)
	for i := 0; header == nil; i++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) || (err == nil && i >= maxPreamble) {
			return Card{}, &InputError{File: file, Line: 1, Err: errors.New("no header line with a Market column (want Market, Currency, Marketing, Utility, Authentication…)")}
		}
		if err != nil {
			return Card{}, csvError(file, err)
		}
		for _, h := range rec {
			if key(strings.TrimPrefix(h, "\ufeff")) == "market" {
				header = rec
			}
		}
	}
	for j, h := range header {
		k := key(strings.TrimPrefix(h, "\ufeff"))
		switch {
		case k == "market" || k == "currency":
		case k != "":
			if c, ok := ParseCategory(h); ok {
				k = string(c)
			} else {
				continue // a column wasend does not read (a note, a region)
			}
		default:
			continue
		}
		if _, dup := cols[k]; dup {
			return Card{}, at(j+1, h, fmt.Errorf("column %q appears twice", h))
		}
		cols[k] = j
	}
	for _, want := range []string{"market", "currency", string(Marketing), string(Utility), string(Authentication)} {
		if _, ok := cols[want]; !ok {
			return Card{}, at(0, "", fmt.Errorf("no %s column (the header has %s)", title(want), strings.Join(header, ", ")))
		}
	}
	card := Card{Source: file, Rates: map[string]map[Category]Micros{}}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Card{}, csvError(file, err)
		}
		if blank(rec) {
			continue
		}
		cell := func(k string) (string, int) {
			j := cols[k]
			if j < len(rec) {
				return strings.TrimSpace(rec[j]), j + 1
			}
			return "", j + 1
		}
		market, mc := cell("market")
		if market == "" {
			return Card{}, at(mc, header[mc-1], errors.New("no market named"))
		}
		if _, dup := card.Rates[market]; dup {
			return Card{}, at(mc, header[mc-1], fmt.Errorf("market %q listed twice", market))
		}
		cur, cc := cell("currency")
		cur = strings.ToUpper(cur)
		if !KnownCurrency(cur) {
			return Card{}, at(cc, header[cc-1], fmt.Errorf("unknown currency %q (want an ISO 4217 code such as USD, EUR, INR)", cur))
		}
		if card.Currency == "" {
			card.Currency = cur
		} else if cur != card.Currency {
			return Card{}, at(cc, header[cc-1], fmt.Errorf("currency %s, but the card's earlier rows are in %s (one currency per card)", cur, card.Currency))
		}
		rates := map[Category]Micros{}
		for _, c := range Categories {
			if _, has := cols[string(c)]; !has {
				continue
			}
			v, j := cell(string(c))
			if v == "" || v == "-" || v == "–" || strings.EqualFold(v, "n/a") {
				continue
			}
			p, err := ParseMicros(v)
			if err != nil {
				return Card{}, at(j, header[j-1], err)
			}
			rates[c] = p
		}
		card.Rates[market] = rates
	}
	if len(card.Rates) == 0 {
		return Card{}, &InputError{File: file, Line: 1, Err: errors.New("no market rows after the header")}
	}
	return card, nil
}

// ParseTiers reads volume tiers (Market, Category, From, To, Price; To
// empty: no end) into the card. Tiers of a market and category must start
// at 1 and follow each other without a gap.
func ParseTiers(file string, r io.Reader, card *Card) error {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		return &InputError{File: file, Line: 1, Err: errors.New("no header line (want Market, Category, From, To, Price)")}
	}
	cols := map[string]int{}
	for j, h := range header {
		cols[key(strings.TrimPrefix(h, "\ufeff"))] = j
	}
	for _, want := range []string{"market", "category", "from", "to", "price"} {
		if _, ok := cols[want]; !ok {
			return &InputError{File: file, Line: 1, Err: fmt.Errorf("no %s column", title(want))}
		}
	}
	card.Tiers = map[string]map[Category][]Tier{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return csvError(file, err)
		}
		at := func(k string, err error) error {
			line, _ := cr.FieldPos(cols[k])
			return &InputError{File: file, Line: line, Column: cols[k] + 1, Header: header[cols[k]], Err: err}
		}
		market := strings.TrimSpace(rec[cols["market"]])
		if _, ok := card.Rates[market]; !ok {
			return at("market", fmt.Errorf("market %q is not on the card", market))
		}
		cat, ok := ParseCategory(rec[cols["category"]])
		if !ok {
			return at("category", fmt.Errorf("unknown category %q", rec[cols["category"]]))
		}
		from, err := ParseMicros(rec[cols["from"]])
		if err != nil || from%microsPerUnit != 0 || from == 0 {
			return at("from", fmt.Errorf("%q is not a message count from 1", rec[cols["from"]]))
		}
		var to Micros
		if v := strings.TrimSpace(rec[cols["to"]]); v != "" {
			if to, err = ParseMicros(v); err != nil || to%microsPerUnit != 0 || to < from {
				return at("to", fmt.Errorf("%q is not a message count from %d up", v, from/microsPerUnit))
			}
		}
		price, err := ParseMicros(rec[cols["price"]])
		if err != nil {
			return at("price", err)
		}
		ts := card.Tiers[market][cat]
		want := int64(1)
		if n := len(ts); n > 0 {
			if ts[n-1].To == 0 {
				return at("from", fmt.Errorf("the tier before has no end"))
			}
			want = ts[n-1].To + 1
		}
		if int64(from/microsPerUnit) != want {
			return at("from", fmt.Errorf("tier starts at %d, want %d (no gap or overlap)", from/microsPerUnit, want))
		}
		if card.Tiers[market] == nil {
			card.Tiers[market] = map[Category][]Tier{}
		}
		card.Tiers[market][cat] = append(ts, Tier{From: want, To: int64(to / microsPerUnit), Price: price})
	}
	return nil
}

func csvError(file string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &InputError{File: file, Line: pe.Line, Column: pe.Column, Err: pe.Err}
	}
	return fmt.Errorf("%s: %w", file, err)
}

func blank(rec []string) bool {
	for _, v := range rec {
		if strings.TrimSpace(v) != "" {
			return false
		}
	}
	return true
}

func title(k string) string {
	switch k {
	case "authentication_international":
		return "Authentication-International"
	}
	return strings.ToUpper(k[:1]) + k[1:]
}
