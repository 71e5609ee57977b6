package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/claimsql"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/recordsql"
	"github.com/wasend/wasend/internal/store/rowscan"
	"github.com/wasend/wasend/internal/store/tierrecord"
)

// RecordAll stores several outcomes in one transaction (a group commit).
// Outcomes refused by their fence change nothing; the others are stored
// and the error is a *campaign.FenceError naming the refused rows.
func (s *Store) RecordAll(ctx context.Context, runner string, rs []campaign.Result) error {
	var refused []int64
	err := s.writeSend(ctx, func(tx *Tx) (err error) {
		refused, err = recordAll(ctx, tx, runner, rs)
		return err
	})
	return fenced(refused, err)
}

// fenced is a batch's error: err, else a FenceError when rows were
// refused by their fence.
func fenced(refused []int64, err error) error {
	if err == nil && len(refused) > 0 {
		return &campaign.FenceError{Rows: refused}
	}
	return err
}

// recordAll stores outcomes and returns the rows whose fence refused them.
func recordAll(ctx context.Context, tx *Tx, runner string, rs []campaign.Result) ([]int64, error) {
	var (
		plain   = make([]campaign.Result, 0, len(rs)) // most are: one copy each, no regrowth
		wamids  []any
		refused []int64
	)
	for _, r := range rs {
		if r.Outcome.Kind == campaign.OutcomeSent && r.Outcome.WAMID != "" {
			wamids = append(wamids, r.Outcome.WAMID)
		}
		if plainSent(r) {
			plain = append(plain, r)
			continue
		}
		moved, err := record(ctx, tx, r.Claim, r.Outcome, r.At)
		if err != nil {
			return nil, err
		}
		if !moved {
			refused = append(refused, r.Claim.Message.ID)
		}
	}
	more, err := recordSent(ctx, tx, plain)
	if err != nil {
		return nil, err
	}
	return append(refused, more...), linkWaitingStatuses(ctx, tx, wamids)
}

// plainSent reports whether r is a message accepted with nothing more to
// it: what most outcomes are, and what recordSent stores in bulk.
func plainSent(r campaign.Result) bool {
	o := r.Outcome
	return o.Kind == campaign.OutcomeSent && r.Claim.AttemptID != 0 && o.ErrorCode == 0 && !o.Refund &&
		o.Throttle == nil && o.RateFactor == 0 && o.Restrict == 0 && !o.DropAccount && o.Pause == "" && !o.Suppress && !o.Held
}

// padded is claimsql.Padded: the padded size of n rows' statement.
var padded = claimsql.Padded

// maxSentBatch bounds the outcomes recordSent stores in one statement.
const maxSentBatch = 256

// recordSent stores what record stores for plain sent outcomes, two
// statements per batch instead of two per message. A row no longer
// 'sending' (or 'unknown') under its claim's fence is left alone, as
// record leaves it, and returned.
func recordSent(ctx context.Context, tx *Tx, rs []campaign.Result) ([]int64, error) {
	var refused []int64
	for len(rs) > 0 {
		n := min(len(rs), maxSentBatch)
		size := padded(n)
		msgArgs := make([]any, 0, 5*size)
		attArgs := make([]any, 0, 3*size)
		for i := range size {
			if i >= n {
				msgArgs = append(msgArgs, 0, "", 0, 0, 0)
				attArgs = append(attArgs, 0, 0, "")
				continue
			}
			r := rs[i]
			msgArgs = append(msgArgs, r.Claim.Message.ID, r.Outcome.WAMID, r.At.UnixNano(), r.Claim.Account.ID, r.Claim.Fence)
			attArgs = append(attArgs, r.Claim.AttemptID, r.At.UnixNano(), r.Outcome.Class)
		}
		more, err := recordSentMany(ctx, tx, rs[:n], size, msgArgs, attArgs)
		if err != nil {
			return nil, fmt.Errorf("record %d messages sent: %w", n, err)
		}
		refused = append(refused, more...)
		rs = rs[n:]
	}
	return refused, nil
}

// record stores one outcome as both drivers do (recordsql.Record); moved
// is false when the row's fence refused it.
func record(ctx context.Context, tx *Tx, c campaign.Claim, o campaign.Outcome, now time.Time) (moved bool, err error) {
	return recordsql.Record(ctx, recordTx{sqlTx{tx}, tx}, sqlite, c, o, now)
}

// recordTx is a transaction as recordsql writes through it.
type recordTx struct {
	sqlTx
	tx *Tx
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// sqlTx is a transaction, or the database, as claimsql (and recordsql)
// read and write through it.
type sqlTx struct {
	q interface {
		querier
		execer
	}
}

func (t sqlTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return manageTx{t.q}.Exec(ctx, query, args...)
}

func (t sqlTx) Query(ctx context.Context, query string, args ...any) (claimsql.Rows, error) {
	rows, err := t.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// sqlRows are rows whose Close's error is Err's.
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }

func (t sqlTx) Accounts(ctx context.Context, where string, args ...any) ([]rowscan.Account, error) {
	rows, err := t.q.QueryContext(ctx, rowscan.AccountQuery("?")+where, append([]any{driver.DefaultMargin}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("read accounts: %w", err)
	}
	defer rows.Close()
	return rowscan.Accounts(rows)
}

func (r recordTx) PauseCampaign(ctx context.Context, id int64, reason string) error {
	return pauseCampaign(ctx, r.tx, id, reason)
}

func (r recordTx) DropAccount(ctx context.Context, campaignID, accountID int64, reason string, code int, now time.Time) error {
	return dropAccount(ctx, r.tx, campaignID, accountID, reason, code, now)
}

func (r recordTx) Demote(ctx context.Context, accountID int64, o campaign.Outcome, now time.Time) error {
	return tierrecord.Demote(ctx, warmupTx{r.tx}, accountID, o, now)
}

// RegisterRunner announces a sender process working on a campaign.
func (s *Store) RegisterRunner(ctx context.Context, r campaign.Runner) error {
	return s.write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO runners (id, campaign_id, host, pid, pid_space, started_at, heartbeat_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, r.ID, r.CampaignID, r.Host, r.PID, r.Space, nanos(r.StartedAt), nanos(r.HeartbeatAt))
		if err != nil {
			return fmt.Errorf("register runner: %w", err)
		}
		return nil
	})
}

// Heartbeat marks a runner alive at now and extends the leases of its rows
// in flight that end within campaign.ExtendWithin by campaign.LeaseTerm.
// It returns an error wrapping campaign.ErrNotFound when the runner is not
// registered (another process took it for dead): the caller registers
// again, or its next claims would be orphans at once.
func (s *Store) Heartbeat(ctx context.Context, id string, now time.Time) error {
	return s.write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runners SET heartbeat_at = ? WHERE id = ?`, now.UnixNano(), id)
		if err != nil {
			return fmt.Errorf("heartbeat of runner %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("heartbeat of runner %s: %w", id, campaign.ErrNotFound)
		}
		if _, err := tx.ExecContext(ctx, extendLeasesSQL, now.Add(campaign.LeaseTerm).UnixNano(), id, now.Add(campaign.ExtendWithin).UnixNano()); err != nil {
			return fmt.Errorf("extend the leases of runner %s: %w", id, err)
		}
		return nil
	})
}

// Start marks the claims' requests started on their attempts, each only
// while its row is still that claim (campaign.FenceOK) and its request not
// yet started. It returns the rows refused (a claim without an attempt is
// one): their lease was lost, so their requests must not be made.
func (s *Store) Start(ctx context.Context, runner string, cs []campaign.Claim, now time.Time) (refused []int64, err error) {
	err = s.writeSend(ctx, func(tx *Tx) error {
		refused = nil // a retried transaction starts over
		for _, c := range cs {
			res, err := tx.ExecContext(ctx, startSQL, c.AttemptID, c.Message.ID, c.Fence)
			if err != nil {
				return fmt.Errorf("start the request of message %d: %w", c.Message.ID, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				refused = append(refused, c.Message.ID)
			}
		}
		return nil
	})
	return refused, err
}

// UnregisterRunner removes a runner that stopped cleanly.
func (s *Store) UnregisterRunner(ctx context.Context, id string) error {
	return s.write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM runners WHERE id = ?`, id)
		return err
	})
}

// RecoverOrphans ends the leases of rows in flight that ran out by now or
// whose runner is gone (dead says which; a gone runner is unregistered),
// as campaign.LeaseExpiry says: a row whose request never started goes
// back to pending; one whose request may have reached the API becomes
// unknown, never resent without an operator's decision. It returns how
// many rows became unknown, by campaign: rows of any campaign are moved,
// and each is its own campaign's to resend.
func (s *Store) RecoverOrphans(ctx context.Context, now time.Time, dead func(campaign.Runner) bool) (map[int64]int, error) {
	return recoverOrphans(ctx, s, 0, now, dead)
}

// Rescue is RecoverOrphans for one campaign's rows, cheap enough for a
// running engine to call every few seconds (it reads the rows through the
// campaign's index): a process that died mid-run blocks the others only
// until its lease runs out or its runner counts as dead. Dead runners of
// any campaign are unregistered. SQLite's one writer makes one rescuer
// run at a time.
func (s *Store) Rescue(ctx context.Context, campaignID int64, now time.Time, dead func(campaign.Runner) bool) (int, error) {
	if campaignID <= 0 {
		return 0, fmt.Errorf("rescue: campaign id %d: %w", campaignID, campaign.ErrNotFound)
	}
	moved, err := recoverOrphans(ctx, s, campaignID, now, dead)
	return moved[campaignID], err
}

// orphanedNote is what an orphaned row's error message says.
const orphanedNote = "interrupted: the request may have reached the API, so it is not resent automatically"

// recoverOrphans does RecoverOrphans (campaignID 0: every campaign) and
// Rescue.
func recoverOrphans(ctx context.Context, s *Store, campaignID int64, now time.Time, dead func(campaign.Runner) bool) (map[int64]int, error) {
	var moved map[int64]int
	err := s.write(ctx, func(tx *Tx) error {
		moved = map[int64]int{}
		rows, err := tx.QueryContext(ctx, `SELECT id, campaign_id, host, pid, pid_space, started_at, heartbeat_at FROM runners`)
		if err != nil {
			return fmt.Errorf("list runners: %w", err)
		}
		var gone []string
		for rows.Next() {
			var r campaign.Runner
			var started, beat int64
			if err := rows.Scan(&r.ID, &r.CampaignID, &r.Host, &r.PID, &r.Space, &started, &beat); err != nil {
				rows.Close()
				return fmt.Errorf("list runners: %w", err)
			}
			r.StartedAt, r.HeartbeatAt = fromNanos(started), fromNanos(beat)
			if dead(r) {
				gone = append(gone, r.ID)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("list runners: %w", err)
		}
		// A runner known dead, or not registered, holds its leases no
		// longer: the faster path.
		for _, id := range gone {
			if _, err := tx.ExecContext(ctx, `DELETE FROM runners WHERE id = ?`, id); err != nil {
				return fmt.Errorf("remove dead runner: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, endLeasesSQL, campaignID); err != nil {
			return fmt.Errorf("end the leases of dead runners: %w", err)
		}
		return expireLeases(ctx, tx, campaignID, now, moved)
	})
	return moved, err
}

// repeated is n copies of one, comma-separated.
func repeated(n int, one string) string {
	return strings.TrimSuffix(strings.Repeat(one+", ", n), ", ")
}
