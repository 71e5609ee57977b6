package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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
	// Rebuilt: the portfolio's day was lost (or rebuilt without this
	// host's part), and this forced reset added this host's part to it
	// instead of starting a new day: Added is the count it added for the
	// account (Reset is then zero).
	Rebuilt bool
	Added   int
	Started bool // the rebuild started the state again (Redis had none)
	// AlreadyAdded: the rebuilt day holds this host's part already (a
	// recovery run again): nothing changed.
	AlreadyAdded bool
}

// ResetSharedQuota starts a new quota day in the shared limits for the
// named accounts (all when names is empty), on today's calendar day in
// the database's zone. Without force an account already on today (or a
// later day) keeps it, so every host's cron line may run it; force starts
// a day again — but a portfolio whose day Redis lost, or rebuilt without
// this host's part, is rebuilt instead (limits.Gate.Rebuild): this host's
// count of the day, its reach window and its repeat guards are added to it
// once, and no count is zeroed; other hosts add theirs before they send
// again.
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
		g, err := gates.Gate(p[0].Portfolio)
		if err == nil && force {
			var rb limits.RebuildResult
			rb, err = s.rebuildShared(ctx, g, p[0].Portfolio, today)
			switch {
			case err == nil && !rb.Already:
				for _, a := range p {
					out = append(out, SharedReset{Account: a.Name, Portfolio: a.Portfolio, Rebuilt: true, Added: rb.Added[a.Gate.Name],
						Started: rb.Started, Reset: limits.Reset{Account: a.Gate.Name, Day: rb.Days[a.Gate.Name]}})
				}
				continue
			case err == nil:
				// This host's part is in: the recovery run again keeps
				// the rebuilt day; an account past it (reset since)
				// starts a new one, as forced.
				var rest []SharedAccount
				for _, a := range p {
					if rb.OnRebuiltDay[a.Gate.Name] {
						out = append(out, SharedReset{Account: a.Name, Portfolio: a.Portfolio, Rebuilt: true, AlreadyAdded: true})
					} else {
						rest = append(rest, a)
					}
				}
				if p = rest; len(p) == 0 {
					continue
				}
			case errors.Is(err, limits.ErrNotLost):
				err = nil // a living day: started anew, as forced
			}
		}
		req := limits.ResetRequest{Today: today, Force: force}
		var accounts []string
		for _, a := range p {
			req.Accounts = append(req.Accounts, a.Gate.Name)
			accounts = append(accounts, a.Name)
		}
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

// HostPart is this database's part of a portfolio's lost quota day, as
// limits.Gate.Rebuild takes it: each of its accounts' count of its own
// quota day, the recipients they messaged in the last 24 h (the reach
// window, the pair gap, the sticky number), and the repeat guards of the
// messages they sent or have in flight (or whose fate is unknown) in that
// time.
func hostPart(ctx context.Context, q querier, host, portfolio, today string, now time.Time) (limits.RebuildRequest, error) {
	r := limits.RebuildRequest{Host: host, Today: today, Now: now}
	accts, err := loadAccounts(ctx, q, `ORDER BY a.id`)
	if err != nil {
		return r, err
	}
	var ids []any
	for _, a := range accts {
		p := DefaultPortfolio
		if a.portfolioID != 0 {
			p = a.Portfolio
		}
		if p != portfolio {
			continue
		}
		ids = append(ids, a.ID)
		r.Accounts = append(r.Accounts, limits.RebuildCount{Account: GateAccount(a.PhoneNumberID), Day: a.QuotaDay, Used: a.UsedToday})
	}
	if len(ids) == 0 {
		return r, nil
	}
	in := "(" + placeholders(len(ids)) + ")"
	cutoff := now.Add(-ratelimit.ReachWindow).UnixNano()
	rows, err := q.QueryContext(ctx, `SELECT c.phone, a.phone_number_id, max(c.last_at) FROM contact_log c
		JOIN accounts a ON a.id = c.account_id WHERE c.account_id IN `+in+` AND c.last_at > ? GROUP BY c.phone`, append(ids, cutoff)...)
	if err != nil {
		return r, fmt.Errorf("read the send log of portfolio %s: %w", portfolio, err)
	}
	for rows.Next() {
		var (
			c  limits.RebuildContact
			at int64
		)
		if err := rows.Scan(&c.Recipient, &c.Account, &at); err != nil {
			rows.Close()
			return r, fmt.Errorf("read the send log of portfolio %s: %w", portfolio, err)
		}
		c.At, c.Account = fromNanos(at), GateAccount(c.Account)
		r.Window = append(r.Window, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return r, fmt.Errorf("read the send log of portfolio %s: %w", portfolio, err)
	}
	rows, err = q.QueryContext(ctx, `SELECT phone, campaign_id, max(updated_at) FROM messages
		WHERE account_id IN `+in+` AND state IN ('sent', 'sending', 'unknown') AND updated_at > ?
		GROUP BY phone, campaign_id`, append(ids, now.Add(-limits.GuardWindow).UnixNano())...)
	if err != nil {
		return r, fmt.Errorf("read the messages of portfolio %s: %w", portfolio, err)
	}
	type sentTo struct {
		phone    string
		campaign int64
		at       int64
	}
	var sent []sentTo
	for rows.Next() {
		var m sentTo
		if err := rows.Scan(&m.phone, &m.campaign, &m.at); err != nil {
			rows.Close()
			return r, fmt.Errorf("read the messages of portfolio %s: %w", portfolio, err)
		}
		sent = append(sent, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return r, fmt.Errorf("read the messages of portfolio %s: %w", portfolio, err)
	}
	guards := map[int64]string{}
	for _, m := range sent {
		g, ok := guards[m.campaign]
		if !ok {
			if g, err = repeatGuard(ctx, q, m.campaign); err != nil {
				return r, err
			}
			guards[m.campaign] = g
		}
		r.Guards = append(r.Guards, limits.RebuildGuard{Recipient: m.phone, Guard: g, At: fromNanos(m.at)})
	}
	return r, nil
}

// rebuildShared adds this host's part of portfolio's day to g, when its
// day was lost or rebuilt without it.
func (s *Store) rebuildShared(ctx context.Context, g limits.Gate, portfolio, today string) (limits.RebuildResult, error) {
	host, err := s.limitsHost(ctx)
	if err != nil {
		return limits.RebuildResult{}, err
	}
	part, err := hostPart(ctx, s.db, host, portfolio, today, s.now())
	if err != nil {
		return limits.RebuildResult{}, err
	}
	return g.Rebuild(ctx, part)
}

// AddLostHost adds by hand the count of a host that will not return to the
// rebuilt day of account's portfolio: label names it (the gate keeps one
// part per label, so running it again adds nothing: already).
func (s *Store) AddLostHost(ctx context.Context, gates Gates, account, label string, count int) (added int, already bool, err error) {
	if s.zoneErr != nil {
		return 0, false, s.zoneErr
	}
	accts, err := s.SharedAccounts(ctx, []string{account})
	if err != nil {
		return 0, false, err
	}
	a := accts[0]
	g, err := gates.Gate(a.Portfolio)
	if err != nil {
		return 0, false, fmt.Errorf("shared limits of portfolio %s: %w", a.Portfolio, err)
	}
	now := s.now()
	today := s.Today(now)
	res, err := g.Rebuild(ctx, limits.RebuildRequest{Host: "hand:" + label, Today: today, Now: now,
		Accounts: []limits.RebuildCount{{Account: a.Gate.Name, Day: today, Used: count}}})
	return res.Added[a.Gate.Name], res.Already, err
}

// rebuildPart adds this host's part to the group's rebuilt day.
func rebuildPart(ctx context.Context, tx *Tx, host string, g *gateGroup, today string, now time.Time) error {
	part, err := hostPart(ctx, tx, host, g.name, today, now)
	if err != nil {
		return err
	}
	if _, err := g.gate.Rebuild(ctx, part); err != nil && !errors.Is(err, limits.ErrNotLost) {
		return err
	}
	return nil
}
