package hostshare

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/limits/redisgate"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

// CheckURL reports what is wrong with rawURL as a limits URL (a wrong
// scheme, a URL that does not parse, a bad database number), without
// connecting: a caller tells a mistyped URL (usage) from a Redis that does
// not answer. The password never appears in the error.
func CheckURL(rawURL string) error { return redisgate.CheckURL(rawURL) }

// QuotaDatabase is what the shared quota day needs of this host's
// database: its accounts as the shared limits know them, its part of a
// lost day, its own quota reset and the global bucket's settings.
// driver.Driver is one.
type QuotaDatabase interface {
	Now() time.Time
	Location() *time.Location
	QuotaDayOpens() error
	AccountReader
	HostPart(ctx context.Context, portfolio, today string) (limits.RebuildRequest, error)
	ResetQuota(ctx context.Context, names []string, force bool) ([]campaign.QuotaReset, error)
	readmodel.Source // the global bucket's settings (readmodel.Reader.GlobalLimit)
}

// ShareLimits makes st's claims ask the limits shared through the Redis at
// rawURL instead of this database's own. Nothing is connected yet: a Redis
// that is down makes sending wait, not the caller fail.
func ShareLimits(ctx context.Context, st driver.Driver, rawURL string) error {
	pool, err := redisgate.Dial(rawURL)
	if err != nil {
		return err
	}
	if err := st.ShareLimits(ctx, pool, redisgate.Unavailable); err != nil {
		pool.Close()
		return err
	}
	return nil
}

// ErrStateLost is the gate's: Redis holds no state for a portfolio (never
// started, or lost in a restart without persistence).
var ErrStateLost = limits.ErrStateLost

// Limits is the limits shared through one Redis, for the commands that
// read or change them themselves (quota reset, limits status, adding a
// lost host's count) rather than through claims.
type Limits struct {
	pool *redisgate.Pool
}

// OpenLimits reads rawURL; nothing is connected yet (see Ping).
func OpenLimits(rawURL string) (*Limits, error) {
	pool, err := redisgate.Dial(rawURL)
	if err != nil {
		return nil, err
	}
	return NewLimits(pool), nil
}

// NewLimits uses a pool already dialed (a test pins its clock). Close
// closes it.
func NewLimits(pool *redisgate.Pool) *Limits { return &Limits{pool: pool} }

// Ping checks that Redis answers.
func (l *Limits) Ping(ctx context.Context) error { return l.pool.Ping(ctx) }

// Time is Redis's clock, the clock of the shared admissions.
func (l *Limits) Time(ctx context.Context) (time.Time, error) { return l.pool.Time(ctx) }

// String is the URL with its password redacted.
func (l *Limits) String() string { return l.pool.String() }

// Close closes the connection.
func (l *Limits) Close() error { return l.pool.Close() }

// Reset is what a quota reset did to one account in the shared limits.
type Reset struct {
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

// ResetQuota starts a new quota day in the shared limits for st's named
// accounts (all when names is empty), on today's calendar day in the
// database's zone. Without force an account already on today (or a later
// day) keeps it, so every host's cron line may run it; force starts a day
// again — but a portfolio whose day Redis lost, or rebuilt without this
// host's part, is rebuilt instead (limits.Gate.Rebuild): this host's count
// of the day, its reach window and its repeat guards are added to it once,
// and no count is zeroed; other hosts add theirs before they send again.
// Every portfolio is reset that can be: one that fails (its state lost,
// say) does not keep the others from their new day. The error, after
// all, names each portfolio that failed (a *ResetError).
func (l *Limits) ResetQuota(ctx context.Context, st QuotaDatabase, names []string, force bool) ([]Reset, error) {
	if err := st.QuotaDayOpens(); err != nil {
		return nil, err
	}
	accts, err := SharedAccounts(ctx, st, names)
	if err != nil {
		return nil, err
	}
	today := campaign.QuotaDay(st.Now(), st.Location())
	var (
		out    []Reset
		failed []ResetFailure
	)
	for _, p := range byPortfolio(accts) {
		g, err := l.pool.Gate(p[0].Portfolio)
		if err == nil && force {
			var rb limits.RebuildResult
			rb, err = rebuild(ctx, st, g, p[0].Portfolio, today)
			switch {
			case err == nil && !rb.Already:
				for _, a := range p {
					out = append(out, Reset{Account: a.Name, Portfolio: a.Portfolio, Rebuilt: true, Added: rb.Added[a.Gate.Name],
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
						out = append(out, Reset{Account: a.Name, Portfolio: a.Portfolio, Rebuilt: true, AlreadyAdded: true})
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
			failed = append(failed, ResetFailure{Portfolio: p[0].Portfolio, Accounts: accounts, Err: err})
			continue
		}
		for i, r := range res {
			out = append(out, Reset{Account: p[i].Name, Portfolio: p[i].Portfolio, Reset: r})
		}
	}
	if len(failed) > 0 {
		return out, &ResetError{Failed: failed}
	}
	return out, nil
}

// ResetDatabaseQuota resets this database's quota days after the shared
// ones (Limits.ResetQuota): forced for every account but those whose shared
// day was just rebuilt from their count (rebuilt), which keep it and start
// a new day only on a new calendar day.
func ResetDatabaseQuota(ctx context.Context, st QuotaDatabase, accounts []string, force bool, rebuilt map[string]bool) ([]campaign.QuotaReset, error) {
	if len(rebuilt) == 0 {
		return st.ResetQuota(ctx, accounts, force)
	}
	all, err := SharedAccounts(ctx, st, accounts)
	if err != nil {
		return nil, err
	}
	var kept, forced []string
	for _, a := range all {
		if rebuilt[a.Name] {
			kept = append(kept, a.Name)
		} else {
			forced = append(forced, a.Name)
		}
	}
	res, err := st.ResetQuota(ctx, kept, false)
	if err != nil || len(forced) == 0 {
		return res, err
	}
	more, err := st.ResetQuota(ctx, forced, force)
	return append(res, more...), err
}

// rebuild adds this host's part of portfolio's day to g, when its day was
// lost or rebuilt without it.
func rebuild(ctx context.Context, st QuotaDatabase, g limits.Gate, portfolio, today string) (limits.RebuildResult, error) {
	part, err := st.HostPart(ctx, portfolio, today)
	if err != nil {
		return limits.RebuildResult{}, err
	}
	return g.Rebuild(ctx, part)
}

// ResetFailure is a portfolio a quota reset could not start a day in.
type ResetFailure struct {
	Portfolio string
	Accounts  []string // this database's names of its accounts
	Err       error
}

// ResetError lists the portfolios a quota reset could not start a day in,
// after it did all the others.
type ResetError struct {
	Failed []ResetFailure
}

func (e *ResetError) Error() string {
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
func (e *ResetError) Unwrap() []error {
	out := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		out[i] = f.Err
	}
	return out
}

// PortfolioState is the shared limits of a database's accounts in one
// portfolio.
type PortfolioState struct {
	Portfolio string
	Accounts  []SharedAccount
	State     limits.State
	Global    *ratelimit.Limit // the global bucket's limit, nil when off
	Reach     ratelimit.Reach  // the portfolio's messaging limit; none for driver.DefaultPortfolio
}

// State reads the shared state of every portfolio of st's accounts. It
// spends nothing.
func (l *Limits) State(ctx context.Context, st QuotaDatabase) ([]PortfolioState, error) {
	accts, err := SharedAccounts(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	gl, _, on, err := readmodel.New(st).GlobalLimit(ctx)
	if err != nil {
		return nil, err
	}
	var global *ratelimit.Limit
	if on {
		global = &gl
	}
	var out []PortfolioState
	for _, p := range byPortfolio(accts) {
		g, err := l.pool.Gate(p[0].Portfolio)
		if err != nil {
			return nil, fmt.Errorf("shared limits of portfolio %s: %w", p[0].Portfolio, err)
		}
		offer := make([]limits.Account, len(p))
		for i, a := range p {
			offer[i] = a.Gate
		}
		s, err := g.State(ctx, offer, global)
		if err != nil {
			return nil, fmt.Errorf("portfolio %s: %w", p[0].Portfolio, err)
		}
		out = append(out, PortfolioState{Portfolio: p[0].Portfolio, Accounts: p, State: s, Global: global, Reach: p[0].Reach})
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

// AddLostHost adds by hand the count of a host that will not return to the
// rebuilt day of account's portfolio: label names it (the gate keeps one
// part per label, so running it again adds nothing: already).
func (l *Limits) AddLostHost(ctx context.Context, st QuotaDatabase, account, label string, count int) (added int, already bool, err error) {
	if err := st.QuotaDayOpens(); err != nil {
		return 0, false, err
	}
	accts, err := SharedAccounts(ctx, st, []string{account})
	if err != nil {
		return 0, false, err
	}
	a := accts[0]
	g, err := l.pool.Gate(a.Portfolio)
	if err != nil {
		return 0, false, fmt.Errorf("shared limits of portfolio %s: %w", a.Portfolio, err)
	}
	now := st.Now()
	today := campaign.QuotaDay(now, st.Location())
	res, err := g.Rebuild(ctx, limits.RebuildRequest{Host: "hand:" + label, Today: today, Now: now,
		Accounts: []limits.RebuildCount{{Account: a.Gate.Name, Day: today, Used: count}}})
	return res.Added[a.Gate.Name], res.Already, err
}
