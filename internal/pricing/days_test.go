package pricing

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestFits(t *testing.T) {
	d := func(s string) time.Time { return ParseDay(s) }
	imported := []Card{
		{ID: 1, Currency: "USD", Effective: d("2025-07-01"), Until: d("2025-10-01"), Source: "a.csv"},
		{ID: 2, Currency: "EUR", Effective: d("2025-07-01"), Source: "b.csv"},
	}
	for _, tt := range []struct {
		card Card
		want string // "" fits
	}{
		{Card{Currency: "USD", Effective: d("2025-10-01"), Source: "c.csv"}, ""},
		{Card{Currency: "INR", Effective: d("2025-07-01"), Source: "c.csv"}, ""},
		{Card{Currency: "USD", Effective: d("2025-09-01"), Source: "c.csv"},
			"c.csv: the USD card from 2025-09-01 overlaps another card's dates: card 1 (from 2025-07-01 until 2025-10-01)"},
		{Card{Currency: "EUR", Effective: d("2025-07-01"), Source: "c.csv"},
			"c.csv: the EUR card from 2025-07-01 overlaps another card's dates: card 2 (from 2025-07-01)"},
	} {
		err := Fits(slices.Clone(imported), tt.card)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s card from %s: %v, want it to fit", tt.card.Currency, Day(tt.card.Effective), err)
			}
			continue
		}
		if err == nil || err.Error() != tt.want || !errors.Is(err, ErrCardOverlap) {
			t.Errorf("%s card from %s: %v, want %q (ErrCardOverlap)", tt.card.Currency, Day(tt.card.Effective), err, tt.want)
		}
	}
	if Day(time.Time{}) != "" || !ParseDay("").IsZero() {
		t.Error("no day should read and write as empty")
	}
}
