package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
)

// Limits shared through gates (--limits), as on SQLite: hosts on one
// Postgres share its limits without them, but a database may still share
// with others (another Postgres, SQLite hosts) through Redis. The
// database is one host there, whichever of its processes claims.

// ShareLimits makes every claim from now on ask g (the claim's shared
// path), this database being one host among those sharing.
func (s *Store) ShareLimits(ctx context.Context, g driver.Gates, unavailable func(error) bool) error {
	id, err := s.limitsHost(ctx)
	if err != nil {
		return err
	}
	s.shared = &driver.SharedLimits{Gates: g, Unavailable: unavailable, Host: id}
	return nil
}

// hostKey is the setting that names this database among the hosts sharing
// limits (SQLite's): claim ids start with it.
const hostKey = "limits_host"

// limitsHost is the database's id among the hosts sharing limits, made the
// first time any of its processes asks.
func (s *Store) limitsHost(ctx context.Context) (string, error) {
	b := make([]byte, 8)
	rand.Read(b)
	if _, err := s.pool.Exec(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`,
		hostKey, hex.EncodeToString(b)); err != nil {
		return "", fmt.Errorf("host id for the shared limits: %w", err)
	}
	id, err := s.setting(ctx, s.pool, hostKey)
	if err != nil {
		return "", fmt.Errorf("host id for the shared limits: %w", err)
	}
	return id, nil
}

// HostPart is this database's part of portfolio's lost quota day on today,
// as this host among those sharing limits: what a forced quota reset
// rebuilds the day from.
func (s *Store) HostPart(ctx context.Context, portfolio, today string) (limits.RebuildRequest, error) {
	host, err := s.limitsHost(ctx)
	if err != nil {
		return limits.RebuildRequest{}, err
	}
	return hostPart(ctx, s.pool, host, portfolio, today, s.now())
}

func (c *claimTx) HostPart(ctx context.Context, host, portfolio, today string, now time.Time) (limits.RebuildRequest, error) {
	return hostPart(ctx, c, host, portfolio, today, now)
}

// hostPart is the database's part of a portfolio's lost quota day, as
// limits.Gate.Rebuild takes it: each of its accounts' count of its own
// quota day, the recipients they messaged in the last 24 h (each at the
// number that messaged it last), and the repeat guards of the messages
// they sent or have in flight (or whose fate is unknown) in that time.
func hostPart(ctx context.Context, q querier, host, portfolio, today string, now time.Time) (limits.RebuildRequest, error) {
	r := limits.RebuildRequest{Host: host, Today: today, Now: now}
	// An account without a portfolio is in the gates' default one.
	accts, err := loadAccounts(ctx, q, `WHERE coalesce(p.name, $2) = $3 ORDER BY a.id`, driver.DefaultPortfolio, portfolio)
	if err != nil || len(accts) == 0 {
		return r, err
	}
	ids := make([]int64, len(accts))
	for i, a := range accts {
		ids[i] = a.ID
		r.Accounts = append(r.Accounts, limits.RebuildCount{Account: driver.GateAccount(a.PhoneNumberID), Day: a.QuotaDay, Used: a.UsedToday})
	}
	rows, err := q.Query(ctx, `SELECT DISTINCT ON (c.phone) c.phone, a.phone_number_id, c.last_at FROM contact_log c
		JOIN accounts a ON a.id = c.account_id WHERE c.account_id = ANY($1) AND c.last_at > $2
		ORDER BY c.phone, c.last_at DESC`, ids, now.Add(-ratelimit.ReachWindow).UnixNano())
	if err != nil {
		return r, fmt.Errorf("read the send log of portfolio %s: %w", portfolio, err)
	}
	r.Window, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (limits.RebuildContact, error) {
		var (
			c       limits.RebuildContact
			account string
			at      int64
		)
		err := row.Scan(&c.Recipient, &account, &at)
		c.At, c.Account = fromNanos(at), driver.GateAccount(account)
		return c, err
	})
	if err != nil {
		return r, fmt.Errorf("read the send log of portfolio %s: %w", portfolio, err)
	}
	rows, err = q.Query(ctx, `SELECT m.phone, c.kind, c.template, c.text, max(m.updated_at) FROM messages m
		JOIN campaigns c ON c.id = m.campaign_id
		WHERE m.account_id = ANY($1) AND m.state IN ('sent', 'sending', 'unknown') AND m.updated_at > $2
		GROUP BY m.phone, m.campaign_id, c.kind, c.template, c.text ORDER BY m.phone, m.campaign_id`,
		ids, now.Add(-limits.GuardWindow).UnixNano())
	if err != nil {
		return r, fmt.Errorf("read the messages of portfolio %s: %w", portfolio, err)
	}
	r.Guards, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (limits.RebuildGuard, error) {
		var (
			g                    limits.RebuildGuard
			kind, template, text string
			at                   int64
		)
		err := row.Scan(&g.Recipient, &kind, &template, &text, &at)
		g.Guard, g.At = campaign.RepeatGuard(campaign.MessageKind(kind), template, text), fromNanos(at)
		return g, err
	})
	if err != nil {
		return r, fmt.Errorf("read the messages of portfolio %s: %w", portfolio, err)
	}
	return r, nil
}
