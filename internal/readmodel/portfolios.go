package readmodel

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/ratelimit"
)

// PortfolioWindow is what the planner needs of one portfolio: its reach
// and the latest send to each recipient in the window now.
type PortfolioWindow struct {
	Name     string
	Reach    ratelimit.Reach
	Accounts []string
	Latest   []time.Time
}

// PortfolioWindows returns the window of every portfolio with a limit. The
// store says which portfolios there are, what limit applies and whose
// sends count (Source.Portfolios, the claim's reads); this reads their
// latest sends.
func (r *Reader) PortfolioWindows(ctx context.Context) ([]PortfolioWindow, error) {
	ps, err := r.src.Portfolios(ctx)
	if err != nil {
		return nil, err
	}
	since := r.now().Add(-ratelimit.ReachWindow)
	var out []PortfolioWindow
	for _, p := range ps {
		if p.Limit <= 0 {
			continue
		}
		w := PortfolioWindow{Name: p.Name, Reach: ratelimit.Reach{Limit: p.Limit, Margin: p.Margin}, Accounts: p.Accounts}
		if len(p.Members) > 0 {
			if w.Latest, err = r.latestSends(ctx, p.Members, since); err != nil {
				return nil, fmt.Errorf("read the window of %s: %w", p.Name, err)
			}
		}
		out = append(out, w)
	}
	return out, nil
}

// latestSends are the latest sends from the accounts to each recipient
// after since, oldest first.
func (r *Reader) latestSends(ctx context.Context, accounts []int64, since time.Time) ([]time.Time, error) {
	args := make([]any, 0, len(accounts)+1)
	for _, id := range accounts {
		args = append(args, id)
	}
	in := "(?" + strings.Repeat(", ?", len(accounts)-1) + ")"
	rows, err := r.db.QueryContext(ctx, `SELECT max(last_at) FROM contact_log WHERE account_id IN `+in+`
		AND last_at > ? GROUP BY phone ORDER BY 1`, append(args, nanos(since))...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var at int64
		if err := rows.Scan(&at); err != nil {
			return nil, err
		}
		out = append(out, fromNanos(at))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
