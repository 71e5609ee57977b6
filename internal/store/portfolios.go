package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
)

// DefaultMargin is the share of a portfolio's messaging limit kept back
// unless --margin says otherwise.
const DefaultMargin = 0.05

// validPortfolio reports settings that cannot work.
func validPortfolio(p campaign.Portfolio) error {
	switch {
	case strings.TrimSpace(p.Name) == "":
		return fmt.Errorf("portfolio name: must not be empty")
	case p.PinnedLimit < 0:
		return fmt.Errorf("portfolio %s: limit %d: must be positive (or none)", p.Name, p.PinnedLimit)
	case !(p.Margin >= 0 && p.Margin < 1):
		return fmt.Errorf("portfolio %s: margin %v: must be at least 0 %% and below 100 %%", p.Name, p.Margin*100)
	}
	return nil
}

// AddPortfolio stores a new portfolio.
func (s *Store) AddPortfolio(ctx context.Context, p campaign.Portfolio) (campaign.Portfolio, error) {
	if err := validPortfolio(p); err != nil {
		return p, err
	}
	err := s.write(ctx, func(tx *Tx) error {
		now := s.now()
		res, err := tx.ExecContext(ctx, `INSERT INTO portfolios (name, pinned_limit, margin, created_at) VALUES (?, ?, ?, ?)`,
			p.Name, nullInt(p.PinnedLimit), p.Margin, now.UnixNano())
		if err != nil {
			if isUnique(err) {
				return fmt.Errorf("portfolio %q: %w", p.Name, ErrExists)
			}
			return fmt.Errorf("insert portfolio %s: %w", p.Name, err)
		}
		p.ID, _ = res.LastInsertId()
		p.CreatedAt = now
		return nil
	})
	return p, err
}

// PortfolioChange is a partial update of a portfolio; nil fields stay.
type PortfolioChange struct {
	PinnedLimit *int // 0 removes the pin
	Margin      *float64
}

// UpdatePortfolio applies a change to the named portfolio. Running
// campaigns read it at their next claim.
func (s *Store) UpdatePortfolio(ctx context.Context, name string, ch PortfolioChange) (campaign.Portfolio, error) {
	var p campaign.Portfolio
	err := s.write(ctx, func(tx *Tx) error {
		var err error
		if p, err = portfolioByName(ctx, tx, name); err != nil {
			return err
		}
		if ch.PinnedLimit != nil {
			p.PinnedLimit = *ch.PinnedLimit
		}
		if ch.Margin != nil {
			p.Margin = *ch.Margin
		}
		if err := validPortfolio(p); err != nil {
			return err
		}
		if err := releaseHeld(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE portfolios SET pinned_limit = ?, margin = ? WHERE id = ?`,
			nullInt(p.PinnedLimit), p.Margin, p.ID); err != nil {
			return fmt.Errorf("update portfolio %s: %w", name, err)
		}
		return nil
	})
	return p, err
}

func portfolioByName(ctx context.Context, q querier, name string) (campaign.Portfolio, error) {
	var (
		p       = campaign.Portfolio{Name: name}
		pinned  sql.NullInt64
		created int64
	)
	err := q.QueryRowContext(ctx, `SELECT id, pinned_limit, margin, created_at FROM portfolios WHERE name = ?`, name).
		Scan(&p.ID, &pinned, &p.Margin, &created)
	if err == sql.ErrNoRows {
		return p, fmt.Errorf("portfolio %q: %w (add it with `wasend portfolio add %s`)", name, campaign.ErrNotFound, name)
	}
	if err != nil {
		return p, fmt.Errorf("read portfolio %s: %w", name, err)
	}
	p.PinnedLimit = int(pinned.Int64)
	p.CreatedAt = fromNanos(created)
	return p, nil
}

// portfolioID resolves a portfolio name for an account: "" is none.
func portfolioID(ctx context.Context, q querier, name string) (sql.NullInt64, error) {
	if name == "" {
		return sql.NullInt64{}, nil
	}
	p, err := portfolioByName(ctx, q, name)
	if err != nil {
		return sql.NullInt64{}, err
	}
	return sql.NullInt64{Int64: p.ID, Valid: true}, nil
}

func nullInt(v int) sql.NullInt64 { return sql.NullInt64{Int64: int64(v), Valid: v != 0} }

// Portfolios returns every portfolio, then every account without one as a
// portfolio of its own, with the reach each has used at the store's clock.
func (s *Store) Portfolios(ctx context.Context) ([]campaign.PortfolioStatus, error) {
	now := s.now()
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, pinned_limit, margin, created_at FROM portfolios ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list portfolios: %w", err)
	}
	var out []campaign.PortfolioStatus
	for rows.Next() {
		var (
			p       campaign.PortfolioStatus
			pinned  sql.NullInt64
			created int64
		)
		if err := rows.Scan(&p.ID, &p.Name, &pinned, &p.Margin, &created); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read portfolio: %w", err)
		}
		p.PinnedLimit, p.CreatedAt = int(pinned.Int64), fromNanos(created)
		out = append(out, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list portfolios: %w", err)
	}
	accts, err := loadAccounts(ctx, s.db, `ORDER BY a.id`)
	if err != nil {
		return nil, err
	}
	byID := map[int64]int{}
	for i := range out {
		byID[out[i].ID] = i
	}
	for _, a := range accts {
		if a.portfolioID == 0 {
			out = append(out, campaign.PortfolioStatus{Own: true, Accounts: []string{a.Name},
				Portfolio: campaign.Portfolio{Name: a.Name, Margin: DefaultMargin}})
			continue
		}
		p := &out[byID[a.portfolioID]]
		p.Accounts = append(p.Accounts, a.Name)
	}
	for i := range out {
		p := &out[i]
		g, err := gateOf(ctx, s.db, p, accts)
		if err != nil {
			return nil, err
		}
		p.Limit, p.Allowed, p.At = g.limit, g.reach.Allowed(), now
		p.ReadLimit, p.ReadFrom, p.ReadAt = g.read, g.readFrom, g.readAt
		if !g.reach.Limited() {
			p.Allowed = 0
		}
		if err := g.count(ctx, s.db, now); err != nil {
			return nil, err
		}
		p.Used = g.used
		if g.used > 0 {
			if err := g.findOldest(ctx, s.db); err != nil {
				return nil, err
			}
			p.FreesAt = ratelimit.FreesAt(g.oldest)
		}
	}
	return out, nil
}

// gateOf builds the reach gate of a listed portfolio.
func gateOf(ctx context.Context, q querier, p *campaign.PortfolioStatus, accts []account) (*reachGate, error) {
	for _, a := range accts {
		if (p.Own && a.Name == p.Name) || (!p.Own && a.portfolioID == p.ID) {
			return gateFor(ctx, q, a)
		}
	}
	// A portfolio without live accounts: its removed ones may still have
	// sent within the window.
	g := &reachGate{limit: p.PinnedLimit, reach: ratelimit.Reach{Limit: p.PinnedLimit, Margin: p.Margin}}
	return g, g.loadMembers(ctx, q, `SELECT id FROM accounts WHERE portfolio_id = ?`, p.ID)
}

// reachGate is one portfolio's messaging limit inside a claim: who belongs
// to it (every account that counts, removed and disabled ones too), and how
// much of the window is used.
type reachGate struct {
	limit int // that applies: 0 none
	reach ratelimit.Reach
	// The limit last read from the Graph API (0: never), through which
	// account, when.
	read     int
	readFrom string
	readAt   time.Time
	members  []any // account ids
	counted  bool
	cutoff   int64 // sends after it are in the window
	used     int
	oldest   time.Time // the oldest latest send in the window, once blocked
	blocked  bool      // refused a new recipient in this claim
}

// gateFor builds the gate of a's portfolio.
func gateFor(ctx context.Context, q querier, a account) (*reachGate, error) {
	read, from, at, err := readLimit(ctx, q, a)
	if err != nil {
		return nil, err
	}
	limit := effectiveLimit(a.pinnedLimit, read)
	g := &reachGate{limit: limit, reach: ratelimit.Reach{Limit: limit, Margin: a.margin},
		read: read, readFrom: from, readAt: fromNanos(at)}
	if a.portfolioID == 0 {
		g.members = []any{a.ID}
		return g, nil
	}
	return g, g.loadMembers(ctx, q, `SELECT id FROM accounts WHERE portfolio_id = ?`, a.portfolioID)
}

// effectiveLimit is the lower of a pinned and a read limit (0: none,
// campaign.Unlimited: none either).
func effectiveLimit(pinned, read int) int {
	if read <= 0 {
		return max(pinned, 0)
	}
	if pinned > 0 {
		return min(pinned, read)
	}
	return read
}

func (g *reachGate) loadMembers(ctx context.Context, q querier, query string, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("read portfolio members: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("read portfolio members: %w", err)
		}
		g.members = append(g.members, id)
	}
	return rows.Err()
}

func (g *reachGate) in() string { return "(" + repeated(len(g.members), "?") + ")" }

// count reads how many distinct recipients the portfolio's numbers
// messaged in the window ending at now.
func (g *reachGate) count(ctx context.Context, q querier, now time.Time) error {
	if g.counted || len(g.members) == 0 {
		return nil
	}
	g.cutoff = now.Add(-ratelimit.ReachWindow).UnixNano()
	args := append(append([]any(nil), g.members...), g.cutoff)
	// One number logs each recipient once: no need to tell them apart.
	what := "count(DISTINCT phone)"
	if len(g.members) == 1 {
		what = "count(*)"
	}
	if err := q.QueryRowContext(ctx, `SELECT `+what+` FROM contact_log WHERE account_id IN `+g.in()+` AND last_at > ?`, args...).
		Scan(&g.used); err != nil {
		return fmt.Errorf("count the portfolio's recipients: %w", err)
	}
	g.counted = true
	return nil
}

// findOldest reads the oldest of the latest sends to the recipients in the
// window: when it leaves, there is room again.
func (g *reachGate) findOldest(ctx context.Context, q querier) error {
	var oldest sql.NullInt64
	args := append(append([]any(nil), g.members...), g.cutoff)
	if err := q.QueryRowContext(ctx, `SELECT min(latest) FROM (SELECT max(last_at) AS latest
		FROM contact_log WHERE account_id IN `+g.in()+` AND last_at > ? GROUP BY phone)`, args...).Scan(&oldest); err != nil {
		return fmt.Errorf("find the portfolio's oldest recipient: %w", err)
	}
	g.oldest = fromNullNanos(oldest)
	return nil
}

// reachGates returns the gate of each account (accounts of one portfolio
// share theirs).
func reachGates(ctx context.Context, q querier, accts []account) ([]*reachGate, error) {
	out := make([]*reachGate, len(accts))
	shared := map[int64]*reachGate{}
	for i, a := range accts {
		if g, ok := shared[a.portfolioID]; ok && a.portfolioID != 0 {
			out[i] = g
			continue
		}
		g, err := gateFor(ctx, q, a)
		if err != nil {
			return nil, err
		}
		out[i], shared[a.portfolioID] = g, g
	}
	return out, nil
}

// logContacts writes the claims' sends into the send log.
func logContacts(ctx context.Context, tx *Tx, cs []campaign.Claim) error {
	if len(cs) == 0 {
		return nil
	}
	size := padded(len(cs))
	args := make([]any, 0, 3*size)
	for _, c := range cs {
		args = append(args, c.Account.ID, c.Message.Phone, c.At.UnixNano())
	}
	for i := len(cs); i < size; i++ {
		args = append(args, 0, "", 0)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO contact_log (account_id, phone, last_at)
		SELECT column1, column2, column3 FROM (VALUES `+repeated(size, "(?, ?, ?)")+`) WHERE column1 <> 0
		ON CONFLICT (account_id, phone) DO UPDATE
		SET prev_at = last_at, last_at = excluded.last_at WHERE excluded.last_at > last_at`, args...); err != nil {
		return fmt.Errorf("log sends: %w", err)
	}
	return nil
}

// unlogContact takes back the send of a claim the API proved it did not
// accept, when nothing was logged for that number since.
func unlogContact(ctx context.Context, tx *Tx, c campaign.Claim) error {
	if _, err := tx.ExecContext(ctx, `UPDATE contact_log SET last_at = prev_at, prev_at = 0
		WHERE account_id = ? AND phone = ? AND last_at = ?`, c.Account.ID, c.Message.Phone, c.At.UnixNano()); err != nil {
		return fmt.Errorf("take back the send to %s: %w", c.Message.Phone, err)
	}
	return nil
}

// PortfolioWindow is what the planner needs of one portfolio: its reach
// and the latest send to each recipient in the window now.
type PortfolioWindow struct {
	Name     string
	Reach    ratelimit.Reach
	Accounts []string
	Latest   []time.Time
}

// PortfolioWindows returns the window of every portfolio with a limit.
func (s *Store) PortfolioWindows(ctx context.Context) ([]PortfolioWindow, error) {
	ps, err := s.Portfolios(ctx)
	if err != nil {
		return nil, err
	}
	accts, err := loadAccounts(ctx, s.db, `ORDER BY a.id`)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var out []PortfolioWindow
	for i := range ps {
		p := &ps[i]
		if p.Limit <= 0 {
			continue
		}
		g, err := gateOf(ctx, s.db, p, accts)
		if err != nil {
			return nil, err
		}
		w := PortfolioWindow{Name: p.Name, Reach: g.reach, Accounts: p.Accounts}
		args := append(append([]any(nil), g.members...), now.Add(-ratelimit.ReachWindow).UnixNano())
		rows, err := s.db.QueryContext(ctx, `SELECT max(last_at) FROM contact_log WHERE account_id IN `+g.in()+`
			AND last_at > ? GROUP BY phone`, args...)
		if err != nil {
			return nil, fmt.Errorf("read the window of %s: %w", p.Name, err)
		}
		for rows.Next() {
			var at int64
			if err := rows.Scan(&at); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read the window of %s: %w", p.Name, err)
			}
			w.Latest = append(w.Latest, fromNanos(at))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		sort.Slice(w.Latest, func(i, j int) bool { return w.Latest[i].Before(w.Latest[j]) })
		out = append(out, w)
	}
	return out, nil
}
