package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

// MaxCost is --max-cost: an amount, and its currency when given ("" :
// the currency of the one card in force).
type MaxCost struct {
	Amount   pricing.Micros
	Currency string
}

// ParseMaxCost reads "150", "150 EUR", "150EUR" or "EUR 150".
func ParseMaxCost(s string) (MaxCost, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	var m MaxCost
	for _, f := range []func(string) (string, string, bool){
		func(t string) (string, string, bool) { return t, "", true },
		func(t string) (string, string, bool) {
			return strings.TrimSpace(t[:max(len(t)-3, 0)]), t[max(len(t)-3, 0):], len(t) > 3
		},
		func(t string) (string, string, bool) {
			return strings.TrimSpace(t[min(3, len(t)):]), t[:min(3, len(t))], len(t) > 3
		},
	} {
		num, cur, ok := f(t)
		if !ok {
			continue
		}
		if cur != "" && !pricing.KnownCurrency(cur) {
			continue
		}
		if a, err := pricing.ParseMicros(num); err == nil {
			m.Amount, m.Currency = a, cur
			return m, nil
		}
	}
	return m, fmt.Errorf("%q is not an amount, e.g. 150 or 150EUR", s)
}

// Pricing is what a campaign's rows cost: the card in force on a date and
// the template's category.
type Pricing struct {
	Card     *pricing.Card
	Category pricing.Category
	Markets  *pricing.Markets
	At       time.Time
}

// PricingFor finds the card of currency ("" : the only currency with a
// card in force) in force at at, and the category of spec's template as
// template sync read it. A text message is a service message.
func PricingFor(ctx context.Context, st driver.Driver, spec campaign.Spec, currency string, at time.Time) (Pricing, error) {
	p := Pricing{Markets: pricing.DefaultMarkets(), At: at, Category: pricing.Service}
	if spec.Kind == campaign.KindTemplate {
		ts, err := readmodel.New(st).Templates(ctx)
		if err != nil {
			return p, err
		}
		for _, t := range ts {
			if t.Name == spec.Template && t.Language == spec.Lang && t.Category != "" {
				cat, ok := pricing.ParseCategory(t.Category)
				if !ok {
					return p, fmt.Errorf("template %s (%s): category %q is not one wasend prices", spec.Template, spec.Lang, t.Category)
				}
				p.Category = cat
				break
			}
		}
		if p.Category == pricing.Service {
			return p, fmt.Errorf("template %s (%s): its category is not known; run `wasend template sync` first", spec.Template, spec.Lang)
		}
	}
	cards, err := readmodel.New(st).Cards(ctx)
	if err != nil {
		return p, err
	}
	if currency == "" {
		var in []string
		for i := range cards {
			if cards[i].InForce(at) && !slices.Contains(in, cards[i].Currency) {
				in = append(in, cards[i].Currency)
			}
		}
		switch len(in) {
		case 0:
			return p, fmt.Errorf("no rate card in force on %s; import one with `wasend pricing import CARD.csv --effective DATE`", at.UTC().Format(time.DateOnly))
		case 1:
			currency = in[0]
		default:
			return p, fmt.Errorf("cards in %s are in force on %s: say which, e.g. --max-cost 100%s", strings.Join(in, " and "), at.UTC().Format(time.DateOnly), in[0])
		}
	}
	if p.Card = pricing.InForceOn(cards, currency, at); p.Card == nil {
		return p, fmt.Errorf("no %s rate card in force on %s; import one with `wasend pricing import CARD.csv --effective DATE`", currency, at.UTC().Format(time.DateOnly))
	}
	return p, nil
}

// RowPrice is what the budget counts for a row to phone.
func (p Pricing) RowPrice(phone string) pricing.Micros {
	return pricing.RowPrice(p.Markets, p.Card, phone, p.Category)
}

// applyBudget stores --max-cost with the campaign (or keeps the one it
// has) and prices its rows by the card in force now, before the engine's
// first claim.
func applyBudget(ctx context.Context, o Options, c campaign.Campaign) error {
	stored, err := readmodel.New(o.Store).CampaignBudget(ctx, c.ID)
	if err != nil {
		return err
	}
	want := MaxCost{Amount: stored.Max, Currency: stored.Currency}
	if o.MaxCost != nil {
		want = *o.MaxCost
		if want.Currency == "" && stored.Currency != "" {
			want.Currency = stored.Currency
		}
	}
	if want.Amount == 0 {
		if stored.Max != 0 { // --max-cost 0: no budget any more
			return o.Store.SetBudget(ctx, c.ID, 0, "", func(string) pricing.Micros { return 0 })
		}
		return nil
	}
	now := time.Now()
	if o.Clock != nil {
		now = o.Clock.Now()
	}
	p, err := PricingFor(ctx, o.Store, c.Spec, want.Currency, now)
	if err != nil {
		return fmt.Errorf("--max-cost: %w", err)
	}
	if err := o.Store.SetBudget(ctx, c.ID, want.Amount, p.Card.Currency, p.RowPrice); err != nil {
		return err
	}
	b, err := readmodel.New(o.Store).CampaignBudget(ctx, c.ID)
	if err != nil {
		return err
	}
	o.IO.Infof("budget: %s %s, %s accepted or in flight (%s card from %s)", b.Max, b.Currency, b.Committed,
		p.Card.Currency, p.Card.Effective.Format(time.DateOnly))
	return nil
}

// budgetStopped says how far a run stopped by its budget got, and how to
// go on.
func budgetStopped(ctx context.Context, o Options, id int64, err error) error {
	if !errors.Is(err, campaign.ErrBudget) {
		return err
	}
	counts, cerr := o.Store.Counts(context.WithoutCancel(ctx), id)
	if cerr != nil {
		return err
	}
	return fmt.Errorf("campaign %d: %w; %d of %d sent, %d pending (raise it to continue: `wasend campaign run --resume %d --max-cost AMOUNT%s`)",
		id, err, counts[campaign.Sent], counts.Total(), counts[campaign.Pending], id, o.Flags)
}
