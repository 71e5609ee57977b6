package store

import (
	"context"
	"fmt"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
)

// SharedAccount is an account as the shared limits know it.
type SharedAccount struct {
	Name      string // this database's name of it
	Portfolio string // the gate's portfolio: its portfolio's name, or DefaultPortfolio
	Gate      limits.Account
	// Reach is the portfolio's messaging limit as claims offer it to the
	// gate (none for DefaultPortfolio: those accounts' reach is their own).
	Reach ratelimit.Reach
}

// SharedAccounts lists the live accounts (all when names is empty) as the
// shared limits know them, by portfolio, with their limits now.
func (s *Store) SharedAccounts(ctx context.Context, names []string) ([]SharedAccount, error) {
	accts, err := loadAccounts(ctx, s.db, `ORDER BY a.id`)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, n := range names {
		if !containsAccount(accts, n) {
			return nil, fmt.Errorf("account %q: not found", n)
		}
		want[n] = true
	}
	now := s.now()
	var out []SharedAccount
	for _, a := range accts {
		if len(want) > 0 && !want[a.Name] {
			continue
		}
		p, reach := DefaultPortfolio, ratelimit.Reach{}
		if a.portfolioID != 0 {
			p = a.Portfolio
			read, _, _, err := readLimit(ctx, s.db, a)
			if err != nil {
				return nil, err
			}
			reach = ratelimit.Reach{Limit: effectiveLimit(a.pinnedLimit, read), Margin: a.margin}
		}
		out = append(out, SharedAccount{Name: a.Name, Portfolio: p, Reach: reach, Gate: limits.Account{
			Name: GateAccount(a.PhoneNumberID), Limit: a.limit(now), DailyCap: a.Limits.DailyCap, Demoted: a.health.Demoted(now)}})
	}
	return out, nil
}

// SharedReset is what a quota reset did to one account in the shared
// limits.
type SharedReset struct {
	Account   string // this database's name
	Portfolio string
	limits.Reset
}

// ResetSharedQuota starts a new quota day in the shared limits for the
// named accounts (all when names is empty), on today's calendar day in
// the database's zone. Without force an account already on today (or a
// later day) keeps it, so every host's cron line may run it; force starts
// a day again, and is the only way to start shared state that was lost.
func (s *Store) ResetSharedQuota(ctx context.Context, gates Gates, names []string, force bool) ([]SharedReset, error) {
	if s.zoneErr != nil {
		return nil, s.zoneErr
	}
	accts, err := s.SharedAccounts(ctx, names)
	if err != nil {
		return nil, err
	}
	today := s.Today(s.now())
	var out []SharedReset
	for _, p := range byPortfolio(accts) {
		g, err := gates.Gate(p[0].Portfolio)
		if err != nil {
			return out, fmt.Errorf("shared limits of portfolio %s: %w", p[0].Portfolio, err)
		}
		req := limits.ResetRequest{Today: today, Force: force}
		for _, a := range p {
			req.Accounts = append(req.Accounts, a.Gate.Name)
		}
		res, err := g.ResetQuota(ctx, req)
		if err != nil {
			return out, fmt.Errorf("portfolio %s: %w", p[0].Portfolio, err)
		}
		for i, r := range res {
			out = append(out, SharedReset{Account: p[i].Name, Portfolio: p[i].Portfolio, Reset: r})
		}
	}
	return out, nil
}

// SharedState is the shared limits of this database's accounts, one
// portfolio at a time.
type SharedState struct {
	Portfolio string
	Accounts  []SharedAccount
	State     limits.State
	Global    *ratelimit.Limit // the global bucket's limit, nil when off
	Reach     ratelimit.Reach  // the portfolio's messaging limit; none for DefaultPortfolio
}

// SharedLimitsState reads the shared state of every account's portfolio.
// It spends nothing.
func (s *Store) SharedLimitsState(ctx context.Context, gates Gates) ([]SharedState, error) {
	accts, err := s.SharedAccounts(ctx, nil)
	if err != nil {
		return nil, err
	}
	gl, _, on, err := s.GlobalLimit(ctx)
	if err != nil {
		return nil, err
	}
	var global *ratelimit.Limit
	if on {
		global = &gl
	}
	var out []SharedState
	for _, p := range byPortfolio(accts) {
		g, err := gates.Gate(p[0].Portfolio)
		if err != nil {
			return nil, fmt.Errorf("shared limits of portfolio %s: %w", p[0].Portfolio, err)
		}
		offer := make([]limits.Account, len(p))
		for i, a := range p {
			offer[i] = a.Gate
		}
		st, err := g.State(ctx, offer, global)
		if err != nil {
			return nil, fmt.Errorf("portfolio %s: %w", p[0].Portfolio, err)
		}
		out = append(out, SharedState{Portfolio: p[0].Portfolio, Accounts: p, State: st, Global: global, Reach: p[0].Reach})
	}
	return out, nil
}

// byPortfolio groups accounts by portfolio, in the order each first
// appears.
func byPortfolio(accts []SharedAccount) [][]SharedAccount {
	var out [][]SharedAccount
	at := map[string]int{}
	for _, a := range accts {
		i, ok := at[a.Portfolio]
		if !ok {
			i = len(out)
			at[a.Portfolio] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], a)
	}
	return out
}
