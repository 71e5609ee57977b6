package runner

import (
	"context"
	"os"
	"time"

	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/store/driver"
)

// CardImport is `pricing import`: a card's file, its optional tiers file,
// and the days it prices (Until zero: until the currency's next card).
type CardImport struct {
	File, Tiers      string
	Effective, Until time.Time
}

// ReadCard reads o's rate card (and its tiers) for the store to import:
// a missing column, a bad price or an unknown currency is refused with the
// file, line and column.
func ReadCard(o CardImport) (pricing.Card, error) {
	card, err := readCard(o.File, o.Tiers)
	card.Effective, card.Until = o.Effective, o.Until
	return card, err
}

func readCard(file, tiers string) (pricing.Card, error) {
	r, err := os.Open(file)
	if err != nil {
		return pricing.Card{}, err
	}
	defer r.Close()
	card, err := pricing.ParseCard(file, r)
	if err != nil || tiers == "" {
		return card, err
	}
	t, err := os.Open(tiers)
	if err != nil {
		return card, err
	}
	defer t.Close()
	return card, pricing.ParseTiers(tiers, t, &card)
}

// RateCards are the imported cards for `pricing list`, oldest first.
func RateCards(ctx context.Context, st driver.Driver, now time.Time) ([]report.RateCard, error) {
	cards, err := readmodel.New(st).Cards(ctx)
	if err != nil {
		return nil, err
	}
	return report.RateCards(cards, now), nil
}
