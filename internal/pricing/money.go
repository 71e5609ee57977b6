// Package pricing is what Meta charges for a template message: dated rate
// cards (a price per market and category, in one currency, with volume
// tiers where the card has them), the country → market table, and the
// arithmetic of an estimate and of an actual cost. Money is integer
// micro-units of the card's currency, so a sum of a million rows is exact.
package pricing

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Micros is an amount in millionths of a currency unit: 0.0625 USD is
// 62500. Meta's cards give at most 4 or 6 decimals; 6 keep every one.
type Micros int64

const microsPerUnit = 1_000_000

// ParseMicros reads a non-negative decimal amount ("0.0625", "12", "1,234.5"
// with a thousands comma) into micro-units. More than 6 decimals, a sign or
// anything not a number is refused.
func ParseMicros(s string) (Micros, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	if t == "" {
		return 0, errors.New("empty, want a price such as 0.0625")
	}
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("%q is negative", s)
	}
	whole, frac, _ := strings.Cut(t, ".")
	if whole == "" {
		whole = "0"
	}
	if !digits(whole) || (frac != "" && !digits(frac)) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if len(frac) > 6 {
		return 0, fmt.Errorf("%q has more than 6 decimals", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > (1<<62)/microsPerUnit {
		return 0, fmt.Errorf("%q is too large", s)
	}
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	}
	return Micros(w*microsPerUnit + f), nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// String is the amount with the decimals it needs, at least 2: "12.50",
// "0.0625".
func (m Micros) String() string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	frac := fmt.Sprintf("%06d", int64(m)%microsPerUnit)
	frac = strings.TrimRight(frac, "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return fmt.Sprintf("%s%d.%s", sign, int64(m)/microsPerUnit, frac)
}

// Times is m × n, refused when it would overflow.
func (m Micros) Times(n int64) Micros { return m * Micros(n) }
