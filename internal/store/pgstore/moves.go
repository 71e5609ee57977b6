package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/claimsql"
	"github.com/wasend/wasend/internal/store/dialect"
	"github.com/wasend/wasend/internal/store/managesql"
	"github.com/wasend/wasend/internal/store/statesql"
)

// The operator's moves on campaigns and accounts, each one transaction whose
// statements name the states they apply to (moves_sql.go), as on SQLite
// (manage.go, results.go, delivery.go, dropped.go, outage.go there).

const postgres = dialect.Postgres

// manageTx is managesql.Tx on Postgres: a transaction, or the pool for a
// read.
type manageTx struct{ q querier }

func (t manageTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := t.q.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

func (t manageTx) Row(ctx context.Context, query string, args []any, dest ...any) (bool, error) {
	err := t.q.QueryRow(ctx, query, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// PauseCampaign pauses a running campaign and returns the state it was in
// (managesql.Pause).
func (s *Store) PauseCampaign(ctx context.Context, id int64, reason string) (was campaign.CampaignState, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) (err error) {
		was, err = managesql.Pause(ctx, manageTx{tx}, postgres, id, reason)
		return err
	})
	return was, err
}

// CancelCampaign ends a running or paused campaign for good and returns
// the state it was in (managesql.Cancel).
func (s *Store) CancelCampaign(ctx context.Context, id int64) (was campaign.CampaignState, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) (err error) {
		was, err = managesql.Cancel(ctx, manageTx{tx}, postgres, id, s.now())
		return err
	})
	return was, err
}

// ResumeCampaign unpauses a campaign and takes back the accounts dropped
// from it; it returns the reason it was paused, "" if it was not.
func (s *Store) ResumeCampaign(ctx context.Context, id int64) (reason string, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) (err error) {
		reason, err = managesql.Resume(ctx, manageTx{tx}, postgres, id)
		return err
	})
	return reason, err
}

// DeleteCampaign deletes a campaign with what it recorded, keeping whom it
// messaged (managesql.Delete).
func (s *Store) DeleteCampaign(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return managesql.Delete(ctx, manageTx{tx}, postgres, id, s.now()) })
}

// RenameCampaign gives a campaign a new name.
func (s *Store) RenameCampaign(ctx context.Context, id int64, name string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return managesql.Rename(ctx, manageTx{tx}, postgres, id, name) })
}

// reopen refuses a cancelled campaign and runs a finished one again when
// rows moved back to pending.
func reopen(ctx context.Context, tx pgx.Tx, id, moved int64) error {
	return managesql.Reopen(ctx, manageTx{tx}, postgres, id, moved)
}

// RequeueFailed moves failed rows back to pending (those with one of codes,
// all when none) and reopens the campaign.
func (s *Store) RequeueFailed(ctx context.Context, id int64, codes []int) (int, error) {
	return s.requeue(ctx, func(tx managesql.Tx) (int64, error) {
		return managesql.RequeueFailed(ctx, tx, postgres, id, codes, s.now())
	})
}

// RequeueUnknown moves unknown rows back to pending and reopens the
// campaign.
func (s *Store) RequeueUnknown(ctx context.Context, id int64) (int, error) {
	return s.requeue(ctx, func(tx managesql.Tx) (int64, error) { return managesql.RequeueUnknown(ctx, tx, postgres, id, s.now()) })
}

// RequeueUndelivered moves sent rows no webhook reported delivered, sent
// before sentBefore, back to pending.
func (s *Store) RequeueUndelivered(ctx context.Context, id int64, sentBefore time.Time) (int, error) {
	return s.requeue(ctx, func(tx managesql.Tx) (int64, error) {
		return managesql.RequeueUndelivered(ctx, tx, postgres, id, sentBefore, s.now())
	})
}

func (s *Store) requeue(ctx context.Context, fn func(tx managesql.Tx) (int64, error)) (int, error) {
	var n int64
	err := s.inTx(ctx, func(tx pgx.Tx) (err error) { n, err = fn(manageTx{tx}); return err })
	return int(n), err
}

// DropAccount stops an account for one campaign; an account already
// dropped keeps its first reason.
func (s *Store) DropAccount(ctx context.Context, campaignID, accountID int64, reason string, code int, now time.Time) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return dropAccount(ctx, tx, campaignID, accountID, reason, code, now) })
}

func dropAccount(ctx context.Context, tx pgx.Tx, campaignID, accountID int64, reason string, code int, now time.Time) error {
	return managesql.DropAccount(ctx, manageTx{tx}, postgres, campaignID, accountID, reason, code, now)
}

// ReadmitAccount takes an account back into a campaign if it was dropped
// with a reason starting with prefix (managesql.ReadmitAccount).
func (s *Store) ReadmitAccount(ctx context.Context, campaignID, accountID int64, prefix string) (bool, error) {
	return managesql.ReadmitAccount(ctx, manageTx{s.pool}, postgres, campaignID, accountID, prefix)
}

// SetOutage records or clears the outage a running campaign waits out;
// with pause, the campaign pauses too (managesql.SetOutage).
func (s *Store) SetOutage(ctx context.Context, campaignID int64, o campaign.Outage, pause string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return managesql.SetOutage(ctx, manageTx{tx}, postgres, campaignID, o, pause) })
}

// RemoveAccount removes the named account (managesql.RemoveAccount).
func (s *Store) RemoveAccount(ctx context.Context, name string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return managesql.RemoveAccount(ctx, manageTx{tx}, postgres, name, s.now()) })
}

// orphanedNote is what an orphaned row's error message says (SQLite's).
const orphanedNote = "interrupted: the request may have reached the API, so it is not resent automatically"

// RecoverOrphans ends the leases that ran out by now or whose runner is
// dead (or unregistered) as campaign.LeaseExpiry says: a row whose request
// never started goes back to pending, one whose request may have started
// becomes unknown (never pending). It returns the rows made unknown, by
// campaign.
func (s *Store) RecoverOrphans(ctx context.Context, now time.Time, dead func(campaign.Runner) bool) (map[int64]int, error) {
	return s.recoverOrphans(ctx, 0, now, dead)
}

// Rescue is RecoverOrphans for one campaign's rows, while its engine runs.
func (s *Store) Rescue(ctx context.Context, campaignID int64, now time.Time, dead func(campaign.Runner) bool) (int, error) {
	if campaignID <= 0 {
		return 0, fmt.Errorf("rescue: campaign id %d: %w", campaignID, campaign.ErrNotFound)
	}
	moved, err := s.recoverOrphans(ctx, campaignID, now, dead)
	return moved[campaignID], err
}

// rescueLock is the advisory lock of the rescuer: any live host may run
// it, one at a time; one that finds it taken leaves the work to the
// holder.
const rescueLock = 0x7761_7365_6e64_02 // "wasend" 2

// lapsedNote is what a row put back by the end of its lease says (SQLite's).
const lapsedNote = "not sent: its runner's lease ran out before the request started"

// recoverOrphans removes the runners dead says are gone, ends their
// leases, then ends every lease run out (campaignID 0: every campaign's).
// A row's lock orders it with a late outcome or start of its runner: the
// one that commits second sees what the first wrote (a row no longer
// sending under its fence refuses the outcome; a sent one is kept, the
// wamid is the truth).
func (s *Store) recoverOrphans(ctx context.Context, campaignID int64, now time.Time, dead func(campaign.Runner) bool) (map[int64]int, error) {
	var moved map[int64]int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		moved = map[int64]int{}
		var mine bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, int64(rescueLock)).Scan(&mine); err != nil {
			return fmt.Errorf("take the rescuer's lock: %w", err)
		}
		if !mine {
			return nil
		}
		rows, err := tx.Query(ctx, `SELECT id, campaign_id, host, pid, pid_space, started_at, heartbeat_at FROM runners`)
		if err != nil {
			return fmt.Errorf("list runners: %w", err)
		}
		var gone []string
		for rows.Next() {
			var (
				r             campaign.Runner
				pid           int64
				started, beat int64
			)
			if err := rows.Scan(&r.ID, &r.CampaignID, &r.Host, &pid, &r.Space, &started, &beat); err != nil {
				rows.Close()
				return fmt.Errorf("list runners: %w", err)
			}
			r.PID, r.StartedAt, r.HeartbeatAt = int(pid), fromNanos(started), fromNanos(beat)
			if dead(r) {
				gone = append(gone, r.ID)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("list runners: %w", err)
		}
		if len(gone) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM runners WHERE id = ANY($1)`, gone); err != nil {
				return fmt.Errorf("remove dead runners: %w", err)
			}
		}
		// A runner known dead, or not registered, holds its leases no
		// longer: the faster path.
		if _, err := tx.Exec(ctx, endLeasesSQL, campaignID); err != nil {
			return fmt.Errorf("end the leases of dead runners: %w", err)
		}
		return expireLeases(ctx, tx, campaignID, now, moved)
	})
	return moved, err
}

// expireLeases ends the leases run out by now as campaign.LeaseExpiry
// says, gives back the daily quota and the contact-log entries of the rows
// put back (and under shared limits queues the gates' charges to be given
// back) and closes the rows' attempts; the rows made unknown are counted
// by campaign in perCampaign.
func expireLeases(ctx context.Context, tx pgx.Tx, campaignID int64, now time.Time, perCampaign map[int64]int) error {
	if _, err := tx.Exec(ctx, lockExpiringSQL, now.UnixNano(), campaignID); err != nil {
		return fmt.Errorf("lock the attempts of expired leases: %w", err)
	}
	for _, r := range campaign.LeaseExpiry {
		note, outcome, class := lapsedNote, "retry", "not-sent"
		if r.Started {
			note, outcome, class = orphanedNote, "unknown", ""
		}
		rows, err := tx.Query(ctx, leaseExpirySQL(r), now.UnixNano(), note, now.UnixNano(), campaignID)
		if err != nil {
			return fmt.Errorf("end expired leases (%s): %w", r.Move, err)
		}
		var ids []int64
		var lapsed []claimsql.Lapsed
		refunds := map[[2]int64]int64{} // (account, quota epoch) → rows
		for rows.Next() {
			var id, c int64
			var acct, epoch *int64
			var attempt int
			if err := rows.Scan(&id, &c, &acct, &epoch, &attempt); err != nil {
				rows.Close()
				return fmt.Errorf("end expired leases: %w", err)
			}
			ids = append(ids, id)
			if r.Started {
				perCampaign[c]++
			} else if acct != nil && epoch != nil {
				refunds[[2]int64{*acct, *epoch}]++
				lapsed = append(lapsed, claimsql.Lapsed{MessageID: id, Attempt: attempt, AccountID: *acct})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("end expired leases: %w", err)
		}
		for k, n := range refunds {
			if _, err := tx.Exec(ctx, `UPDATE accounts SET used_today = greatest(used_today - $1, 0)
				WHERE id = $2 AND quota_epoch = $3`, n, k[0], k[1]); err != nil {
				return fmt.Errorf("refund quota of lapsed claims: %w", err)
			}
		}
		if len(ids) > 0 && !r.Started {
			if _, err := tx.Exec(ctx, statesql.Unlog(`messages.id = ANY($1)`), ids); err != nil {
				return fmt.Errorf("take back the sends of lapsed claims: %w", err)
			}
		}
		if len(ids) > 0 {
			if _, err := tx.Exec(ctx, `UPDATE attempts SET done_at = $1, outcome = $2, class = nullif($3, '')
				WHERE done_at IS NULL AND message_id = ANY($4)`, now.UnixNano(), outcome, class, ids); err != nil {
				return fmt.Errorf("close attempts of expired leases: %w", err)
			}
		}
		if err := claimsql.New(sqlTx{tx}, postgres).QueueLapseRefunds(ctx, lapsed, now); err != nil {
			return err
		}
	}
	return nil
}
