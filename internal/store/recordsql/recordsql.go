// Package recordsql records one outcome — a send's answer that is more
// than a plain acceptance — the same way on both drivers of the store:
// the row's fenced move, the daily quota and the contact log given back on
// a refund, what the answer means for the account and the
// campaign, the attempt closed. A fix to it is made once.
//
// The statements are written once, with SQLite's numbered placeholders
// (?N) and greatest(a, b) for the larger of two values, and built for each
// dialect.Dialect when the package loads: Postgres gets $N, SQLite its scalar
// max. What a driver keeps in its own words because other paths reach it
// too (pausing a campaign, dropping an account from one, a demotion,
// reading accounts) it gives through Tx. The plain acceptances' bulk
// statements stay each driver's: SQLite pads a VALUES list, Postgres
// pipelines arrays in one batch.
package recordsql

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/dialect"
	"github.com/wasend/wasend/internal/store/rowscan"
	"github.com/wasend/wasend/internal/store/statesql"
)

// Tx is a driver's transaction as Record writes through it.
type Tx interface {
	// Exec runs one statement of this package's, built for the driver's
	// Dialect, and says how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (rows int64, err error)
	// Accounts reads rowscan.AccountQuery's rows (its first placeholder
	// the default margin) followed by where, whose placeholders start at 2.
	Accounts(ctx context.Context, where string, args ...any) ([]rowscan.Account, error)
	// PauseCampaign pauses a campaign for reason (campaign.CampaignPause).
	PauseCampaign(ctx context.Context, id int64, reason string) error
	// DropAccount stops an account for one campaign.
	DropAccount(ctx context.Context, campaignID, accountID int64, reason string, code int, now time.Time) error
	// Demote moves an auto-tier account down when the answer says so
	// (campaign.Demotion).
	Demote(ctx context.Context, accountID int64, o campaign.Outcome, now time.Time) error
}

// Record stores one outcome of claim c in tx; moved is false when the
// row's fence refused it (what the answer says about the account and the
// campaign is kept all the same).
func Record(ctx context.Context, tx Tx, d dialect.Dialect, c campaign.Claim, o campaign.Outcome, now time.Time) (moved bool, err error) {
	q := &byDialect[d]
	outcome, ok := outcomes[o.Kind]
	if !ok {
		return false, fmt.Errorf("record message %d: unknown outcome %d", c.Message.ID, o.Kind)
	}
	var code any // NULL without one
	if o.ErrorCode != 0 {
		code = int64(o.ErrorCode)
	}
	n, err := move(ctx, tx, q, c, o, code, now)
	if err != nil {
		return false, fmt.Errorf("record message %d %s: %w", c.Message.ID, outcome, err)
	}
	// A row no longer this claim's (its lease ran out, or it was claimed
	// again) is left to its holder, but what the answer says about the
	// account and campaign is still true.
	if moved = n > 0; moved && o.Refund {
		if _, err := tx.Exec(ctx, q.refundQuota, c.Account.ID, c.QuotaEpoch); err != nil {
			return false, fmt.Errorf("refund quota of %s: %w", c.Account.Name, err)
		}
		if err := UnlogContact(ctx, tx, d, c); err != nil {
			return false, err
		}
		// A refund for the shared limits waits here until a gate takes it:
		// recording an outcome never waits on Redis.
		if sc := c.Shared; sc != nil {
			if _, err := tx.Exec(ctx, q.queueRefund, sc.ID, sc.Portfolio, sc.Account, sc.Day, now.UnixNano()); err != nil {
				return false, fmt.Errorf("queue the refund of %s: %w", sc.ID, err)
			}
		}
	}
	if err := applyEffects(ctx, tx, q, c, o, now); err != nil {
		return false, err
	}
	// A closed attempt's time never goes back (a late answer after a
	// rescue closed it): the kept counts keep the latest.
	if c.AttemptID != 0 {
		_, err = tx.Exec(ctx, q.closeAttempt, now.UnixNano(), outcome, code, o.Class, c.AttemptID)
	} else {
		_, err = tx.Exec(ctx, q.closeLastAttempt, now.UnixNano(), outcome, code, o.Class, c.Message.ID)
	}
	if err != nil {
		return false, fmt.Errorf("log attempt outcome: %w", err)
	}
	return moved, nil
}

// UnlogContact takes back the send of claim c, which the API proved it did
// not accept, when nothing was logged for that number since: the log names
// the claim before (claimsql.LogClaims).
func UnlogContact(ctx context.Context, tx Tx, d dialect.Dialect, c campaign.Claim) error {
	if _, err := tx.Exec(ctx, byDialect[d].unlogContact, c.Account.ID, c.Message.Phone, c.At.UnixNano(), c.AttemptID); err != nil {
		return fmt.Errorf("take back the send to %s: %w", c.Message.Phone, err)
	}
	return nil
}

// outcomes are the attempts' names for each kind of outcome.
var outcomes = map[campaign.OutcomeKind]string{
	campaign.OutcomeSent: "sent", campaign.OutcomeRetry: "retry", campaign.OutcomeFailed: "failed", campaign.OutcomeUnknown: "unknown",
}

// move moves the claimed row by the transition its outcome names and
// says whether it did (1) or its fence refused it (0).
func move(ctx context.Context, tx Tx, q *statements, c campaign.Claim, o campaign.Outcome, code any, now time.Time) (int64, error) {
	switch o.Transition() {
	case campaign.MoveRecordSent:
		return tx.Exec(ctx, q.sent, o.WAMID, now.UnixNano(), c.Message.ID, c.Fence)
	case campaign.MoveRecordHeld:
		return tx.Exec(ctx, q.held, o.WAMID, now.UnixNano(), c.Message.ID, c.Fence)
	case campaign.MoveRecordRetry, campaign.MovePutBack:
		spends := 0
		if o.SpendsRetry {
			spends = 1
		}
		return tx.Exec(ctx, q.retry, rowscan.Nanos(o.RetryAt), now.UnixNano(), spends, code, o.Error, c.Message.ID, c.Fence)
	case campaign.MoveRecordFailed:
		return tx.Exec(ctx, q.failed, now.UnixNano(), code, o.Error, c.Message.ID, c.Fence)
	case campaign.MoveRecordUnknown:
		return tx.Exec(ctx, q.unknown, now.UnixNano(), code, o.Error, c.Message.ID, c.Fence)
	}
	return 0, fmt.Errorf("unknown outcome %d", o.Kind)
}

// applyEffects carries out what an answer means beyond its row: an account
// that rests or is dropped, a campaign that pauses, a number suppressed.
func applyEffects(ctx context.Context, tx Tx, q *statements, c campaign.Claim, o campaign.Outcome, now time.Time) error {
	acct := c.Account
	if o.ErrorCode != 0 {
		if _, err := tx.Exec(ctx, q.noteError, o.ErrorCode, acct.ID); err != nil {
			return fmt.Errorf("note error of %s: %w", acct.Name, err)
		}
	}
	if o.Throttle != nil || o.RateFactor > 0 {
		if err := cool(ctx, tx, q, acct, o, now); err != nil {
			return err
		}
	}
	if o.Restrict > 0 {
		if _, err := tx.Exec(ctx, q.restrict, now.Add(o.Restrict).UnixNano(), o.Error, acct.ID); err != nil {
			return fmt.Errorf("restrict %s: %w", acct.Name, err)
		}
	}
	if o.DropAccount {
		if err := tx.DropAccount(ctx, c.Message.CampaignID, acct.ID, o.Error, o.ErrorCode, now); err != nil {
			return err
		}
	}
	if o.Pause != "" {
		if err := tx.PauseCampaign(ctx, c.Message.CampaignID, o.Pause); err != nil {
			return err
		}
	}
	if err := tx.Demote(ctx, acct.ID, o, now); err != nil {
		return err
	}
	if o.Suppress {
		if _, err := tx.Exec(ctx, q.suppress, c.Message.Phone,
			fmt.Sprintf("error %d in campaign %d", o.ErrorCode, c.Message.CampaignID), now.UnixNano()); err != nil {
			return fmt.Errorf("suppress %s: %w", c.Message.Phone, err)
		}
	}
	return nil
}

// cool stores the throttle reaction ratelimit.Reaction decided: the
// account's rate factor, and a cool-down for it — or, for a throttle of
// the whole app, for every enabled account. Each bucket is read and
// written back, so where the database locks rows they are locked first.
func cool(ctx context.Context, tx Tx, q *statements, acct campaign.Account, o campaign.Outcome, now time.Time) error {
	lock, where, args := q.lockAccount, `WHERE a.id = ?2`, []any{acct.ID}
	if o.Throttle != nil && o.Throttle.App {
		lock, where, args = q.lockEnabled, `WHERE a.disabled = 0`, nil
	}
	if lock != "" {
		if _, err := tx.Exec(ctx, lock, args...); err != nil {
			return fmt.Errorf("lock accounts: %w", err)
		}
	}
	accts, err := tx.Accounts(ctx, q.d.Bind(where), args...)
	if err != nil {
		return err
	}
	for _, a := range accts {
		factor, rest := 0.0, time.Duration(0)
		if a.ID == acct.ID {
			factor = o.RateFactor
		}
		if o.Throttle != nil {
			rest = o.Throttle.Cooldown
		}
		h := a.Health.Reacted(now, factor, rest)
		// Book the tokens earned at the old rate before it changes.
		l := ratelimit.Limit{Rate: a.Limits.Rate, Burst: a.Limits.Burst}
		b := ratelimit.Bucket{Tokens: a.Tokens, At: a.At}.Relimit(a.Health.Scale(l, now), h.Scale(l, now), now)
		if _, err := tx.Exec(ctx, q.cool, rowscan.Nanos(h.CooldownUntil), h.Streak, rowscan.Nanos(h.LastThrottle), h.Factor,
			rowscan.Nanos(h.FactorSince), b.Tokens, rowscan.Nanos(b.At), a.ID); err != nil {
			return fmt.Errorf("cool down %s: %w", a.Name, err)
		}
	}
	return nil
}

// statements are this package's SQL in one dialect.
type statements struct {
	d                                   dialect.Dialect
	sent, held, retry, failed, unknown  string // the row's move, fenced
	refundQuota, unlogContact           string
	queueRefund                         string
	noteError, restrict, cool, suppress string
	lockAccount, lockEnabled            string // "" where rows are not locked
	closeAttempt, closeLastAttempt      string
}

var byDialect = dialect.Both(build)

// build writes the statements for d. Every write after a claim applies
// only while the row is still that claim: its fence. A sent outcome also
// applies to a row a rescue made unknown under the same claim (the wamid
// is the truth); a retry, failure or unknown leaves such a row as the
// operator sees it (campaign.Transitions says which states each move
// starts from).
func build(d dialect.Dialect) statements {
	fenced := func(t campaign.Transition, set, id, fence string) string {
		return d.Bind(`UPDATE messages SET ` + statesql.To(t) + `, ` + set + ` WHERE id = ` + id +
			` AND ` + statesql.From(t, "state") + ` AND ` + statesql.Fence("attempts", fence))
	}
	closeAttempt := `UPDATE attempts SET done_at = ` + d.Greatest("coalesce(done_at, ?1)", "?1") +
		`, outcome = ?2, error_code = ?3, class = ?4 WHERE id = `
	q := statements{
		d: d,
		sent: fenced(campaign.MoveRecordSent, `wamid = ?1, sent_at = ?2, updated_at = ?2, error_code = NULL, error_message = NULL`,
			"?3", "?4"),
		held: fenced(campaign.MoveRecordHeld, `wamid = ?1, sent_at = ?2, updated_at = ?2, delivery = `+
			statesql.Quote(campaign.DeliveryHeld)+`, error_code = NULL, error_message = NULL`, "?3", "?4"),
		retry: fenced(campaign.MoveRecordRetry, `next_attempt_at = ?1, updated_at = ?2, retries = retries + ?3, error_code = ?4,
			error_message = ?5`, "?6", "?7"),
		failed:  fenced(campaign.MoveRecordFailed, `updated_at = ?1, error_code = ?2, error_message = ?3`, "?4", "?5"),
		unknown: fenced(campaign.MoveRecordUnknown, `updated_at = ?1, error_code = ?2, error_message = ?3`, "?4", "?5"),

		refundQuota: d.Bind(`UPDATE accounts SET used_today = ` + d.Greatest("used_today - 1", "0") +
			` WHERE id = ?1 AND quota_epoch = ?2`),
		unlogContact: d.Bind(`UPDATE contact_log SET last_at = prev_at, prev_at = 0, last_attempt = prev_attempt, prev_attempt = NULL
			WHERE account_id = ?1 AND phone = ?2 AND last_at = ?3 AND (?4 = 0 OR coalesce(last_attempt, ?4) = ?4)`),
		queueRefund: d.Bind(`INSERT INTO gate_refunds (claim, portfolio, account, day, at) VALUES (?1, ?2, ?3, ?4, ?5)
			ON CONFLICT DO NOTHING`),

		noteError: d.Bind(`UPDATE accounts SET last_error_code = ?1 WHERE id = ?2`),
		restrict: d.Bind(`UPDATE accounts SET cooldown_until = ` + d.Greatest("cooldown_until", "?1") +
			`, restriction = ?2 WHERE id = ?3`),
		cool: d.Bind(`UPDATE accounts SET cooldown_until = ?1, throttle_streak = ?2, last_throttle_at = ?3, rate_factor = ?4,
			rate_factor_at = ?5, tokens = ?6, tokens_at = ?7 WHERE id = ?8`),
		suppress: d.Bind(`INSERT INTO suppressions (phone, reason, created_at) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING`),

		closeAttempt:     d.Bind(closeAttempt + `?5`),
		closeLastAttempt: d.Bind(closeAttempt + `(SELECT max(id) FROM attempts WHERE message_id = ?5)`),
	}
	if d == dialect.Postgres { // SQLite's one writer holds every row already
		q.lockAccount = `SELECT id FROM accounts WHERE id = $1 ORDER BY id FOR UPDATE`
		q.lockEnabled = `SELECT id FROM accounts WHERE disabled = 0 AND removed_at IS NULL ORDER BY id FOR UPDATE`
	}
	return q
}
