package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// claimLock is the advisory lock every sending transaction (a claim, an
// outcome recorded with the next claim) takes first. It makes them one at a
// time across hosts, as SQLite's single writer does: buckets, caps, the
// reach, the pair gap, sticky numbers and the repeat guard span campaigns
// and accounts, and each claim decides on what the one before it wrote.
// Other writes (the operator's moves, webhooks, a rescue) do not take it;
// they meet the claim on row locks.
const claimLock = 0x7761_7365_6e64_01 // "wasend" 1

// maxTxAttempts bounds the runs of one transaction that Postgres aborted
// for a deadlock or a serialization failure.
const maxTxAttempts = 8

// inTx runs fn in one transaction, committed when fn returns nil, and again
// from the start when Postgres aborts it for a deadlock or a serialization
// failure, or the session was lost before the commit reached the server (fn
// must start over: it is a retried transaction's). A session is lost under a
// host stopped (SIGSTOP, a frozen VM) inside a transaction longer than
// idle_in_transaction_session_timeout: the server ended it and rolled the
// transaction back, so nothing of it stayed.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	for attempt := 1; ; attempt++ {
		lost, err := s.tx(ctx, fn)
		if err == nil || !(retryable(err) || lost) || attempt >= maxTxAttempts || ctx.Err() != nil {
			return err
		}
		if retryable(err) {
			s.retried.Add(1)
		}
	}
}

// tx runs fn in one transaction; lost says it surely did not commit for a
// lost session: its begin failed, or fn failed on a session that ended (the
// commit was never sent), or the commit was never written. A commit that
// failed otherwise may have committed: not lost.
func (s *Store) tx(ctx context.Context, fn func(tx pgx.Tx) error) (lost bool, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return true, err // nothing ran
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		return tx.Conn().IsClosed() || sessionEnded(err), err
	}
	err = tx.Commit(ctx)
	return err != nil && pgconn.SafeToRetry(err), err
}

// sendTx is inTx for the sending path: fn gets a batch that holds the
// claim lock, and must send it (send, or with its own first statements)
// before anything else runs on tx.
func (s *Store) sendTx(ctx context.Context, fn func(tx pgx.Tx, lead *pgx.Batch) error) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		lead := &pgx.Batch{}
		lead.Queue(`SELECT pg_advisory_xact_lock($1)`, int64(claimLock))
		return fn(tx, lead)
	})
}

// send runs b's statements in one round trip and empties b.
func send(ctx context.Context, tx pgx.Tx, b *pgx.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	q := *b
	*b = pgx.Batch{}
	return tx.SendBatch(ctx, &q).Close()
}

// retryable reports whether Postgres aborted a transaction that may simply
// run again: deadlock_detected, serialization_failure.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// sessionEnded reports whether the server ended the session (an
// administrator, a shutdown, idle_in_transaction_session_timeout: a host
// stopped inside its transaction).
func sessionEnded(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "57P01", "57P02", "57P03", "25P03": // admin_shutdown, crash_shutdown, cannot_connect_now, idle_in_transaction_session_timeout
		return true
	}
	return false
}
