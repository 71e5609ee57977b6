package store

import (
	"context"
	"fmt"
	"strings"

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
// Every portfolio is reset that can be: one that fails (its state lost,
// say) does not keep the others from their new day. The error, after
// all, names each portfolio that failed (a *SharedResetError).
func (s *Store) ResetSharedQuota(ctx context.Context, gates Gates, names []string, force bool) ([]SharedReset, error) {
	if s.zoneErr != nil {
		return nil, s.zoneErr
	}
	accts, err := s.SharedAccounts(ctx, names)
	if err != nil {
		return nil, err
	}
	today := s.Today(s.now())
	var (
		out    []SharedReset
		failed []SharedResetFailure
	)
	for _, p := range byPortfolio(accts) {
		req := limits.ResetRequest{Today: today, Force: force}
		var accounts []string
		for _, a := range p {
			req.Accounts = append(req.Accounts, a.Gate.Name)
			accounts = append(accounts, a.Name)
		}
		g, err := gates.Gate(p[0].Portfolio)
		var res []limits.Reset
		if err == nil {
			res, err = g.ResetQuota(ctx, req)
		}
		if err != nil {
			failed = append(failed, SharedResetFailure{Portfolio: p[0].Portfolio, Accounts: accounts, Err: err})
			continue
		}
		for i, r := range res {
			out = append(out, SharedReset{Account: p[i].Name, Portfolio: p[i].Portfolio, Reset: r})
		}
	}
	if len(failed) > 0 {
		return out, &SharedResetError{Failed: failed}
	}
	return out, nil
}

// SharedResetFailure is a portfolio a quota reset could not start a day in.
type SharedResetFailure struct {
	Portfolio string
	Accounts  []string // this database's names of its accounts
	Err       error
}

// SharedResetError lists the portfolios a quota reset could not start a
// day in, after it did all the others.
type SharedResetError struct {
	Failed []SharedResetFailure
}

func (e *SharedResetError) Error() string {
	var b strings.Builder
	for i, f := range e.Failed {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "portfolio %s (%s): %v", f.Portfolio, strings.Join(f.Accounts, ", "), f.Err)
	}
	return b.String()
}

// Unwrap lets errors.Is find ErrStateLost (or an unreachable Redis) in any
// of the failures.
func (e *SharedResetError) Unwrap() []error {
	out := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		out[i] = f.Err
	}
	return out
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
