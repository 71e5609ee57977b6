package claimsql

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// HostKey is the setting that names a database among the hosts sharing
// limits: its claim ids start with it (campaign.SharedClaimID), so two
// hosts never use the same one.
const HostKey = "limits_host"

// Lapsed is a claim whose lease ran out before its request started
// (campaign.MoveLapse): it reached nobody.
type Lapsed struct {
	MessageID int64
	Attempt   int // the row's claim count: the claim's attempt
	AccountID int64
}

// QueueLapseRefunds queues, for the next claim (or the run's end) to give
// back, what the shared limits charged for each lapsed claim — its count
// against the cap, the recipient's pair gap, sticky sender and place in
// the reach window — as the database's own count and contact log are
// given back beside it. The claim id is the one the claim asked the gate
// with and the portfolio its account's; an empty account and day are the
// claim's as the gate recorded them. A database that never shared its
// limits has no host id, and its gates charged nothing. A put-back's
// refund is queued by the record path under the same id: nothing twice.
func (c Common) QueueLapseRefunds(ctx context.Context, lapsed []Lapsed, now time.Time) error {
	if len(lapsed) == 0 {
		return nil
	}
	var host string
	found, err := c.row(ctx, `SELECT value FROM settings WHERE key = ?1`, []any{HostKey}, &host)
	if err != nil {
		return fmt.Errorf("read the host id for the shared limits: %w", err)
	}
	if !found {
		return nil
	}
	for _, l := range lapsed {
		id := campaign.SharedClaimID(host, l.MessageID, l.Attempt)
		if err := c.exec(ctx, `INSERT INTO gate_refunds (claim, portfolio, account, day, at)
			SELECT ?1, coalesce(p.name, ?2), '', '', ?3 FROM accounts AS a LEFT JOIN portfolios AS p ON p.id = a.portfolio_id
			WHERE a.id = ?4 ON CONFLICT DO NOTHING`, id, driver.DefaultPortfolio, now.UnixNano(), l.AccountID); err != nil {
			return fmt.Errorf("queue the refund of the lapsed claim %s: %w", id, err)
		}
	}
	return nil
}
