package hostshare

import (
	"context"
	"fmt"
	"slices"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
)

// SharedAccount is an account as the shared limits know it.
type SharedAccount struct {
	Name      string // this database's name of it
	Portfolio string // the gate's portfolio: its portfolio's name, or driver.DefaultPortfolio
	Gate      limits.Account
	// Reach is the portfolio's messaging limit as claims offer it to the
	// gate (none for driver.DefaultPortfolio: those accounts' reach is
	// their own).
	Reach ratelimit.Reach
}

// AccountReader is what SharedAccounts reads of the database; driver.Driver
// is one.
type AccountReader interface {
	Accounts(ctx context.Context) ([]campaign.AccountStatus, error)
	Portfolios(ctx context.Context) ([]campaign.PortfolioStatus, error)
}

// SharedAccounts lists the database's live accounts (all when names is
// empty) as the shared limits know them, by portfolio, with their limits at
// the database's clock: the gate knows a number by its phone-number id,
// sends at its tier's rate scaled by its health, and counts an account
// without a portfolio in driver.DefaultPortfolio.
func SharedAccounts(ctx context.Context, db AccountReader, names []string) ([]SharedAccount, error) {
	accts, err := db.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if !slices.ContainsFunc(accts, func(a campaign.AccountStatus) bool { return a.Name == n }) {
			return nil, fmt.Errorf("account %q: %w", n, campaign.ErrNotFound)
		}
	}
	reach := map[string]ratelimit.Reach{}
	if slices.ContainsFunc(accts, func(a campaign.AccountStatus) bool { return a.Portfolio != "" }) {
		ps, err := db.Portfolios(ctx)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if !p.Own {
				reach[p.Name] = ratelimit.Reach{Limit: p.Limit, Margin: p.Margin}
			}
		}
	}
	var out []SharedAccount
	for _, a := range accts {
		if len(names) > 0 && !slices.Contains(names, a.Name) {
			continue
		}
		p := a.Portfolio
		if p == "" {
			p = driver.DefaultPortfolio
		}
		out = append(out, SharedAccount{Name: a.Name, Portfolio: p, Reach: reach[a.Portfolio], Gate: limits.Account{
			Name:     driver.GateAccount(a.PhoneNumberID),
			Limit:    ratelimit.Limit{Rate: a.Limits.Rate * a.RateFactor, Burst: a.Limits.Burst},
			DailyCap: a.Limits.DailyCap,
			Demoted:  a.RateFactor < 1,
		}})
	}
	return out, nil
}
