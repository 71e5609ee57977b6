package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/dialect"
	"github.com/wasend/wasend/internal/store/managesql"
)

// The operator's moves on accounts and campaigns, as managesql writes them
// for both drivers: each is one transaction whose WHERE clause names the
// states it applies to, so a move that no longer applies (the campaign
// finished meanwhile) changes nothing and says why.

// sqlite is the dialect the shared SQL packages build this driver's statements in.
const sqlite = dialect.SQLite

// manageTx is managesql.Tx on SQLite: a write transaction, or the database
// for a read.
type manageTx struct {
	q interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	}
}

func (t manageTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t manageTx) Row(ctx context.Context, query string, args []any, dest ...any) (bool, error) {
	err := t.q.QueryRowContext(ctx, query, args...).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// numberFree is managesql.NumberFree.
func numberFree(ctx context.Context, tx *Tx, name, number string, id int64) error {
	return managesql.NumberFree(ctx, manageTx{tx}, sqlite, name, number, id)
}

// RemoveAccount removes the named account (managesql.RemoveAccount).
func (s *Store) RemoveAccount(ctx context.Context, name string) error {
	return s.write(ctx, func(tx *Tx) error { return managesql.RemoveAccount(ctx, manageTx{tx}, sqlite, name, s.now()) })
}

// CampaignStopped returns campaign.ErrPaused or campaign.ErrCancelled when
// the campaign was paused or cancelled, and nil while it may be sent.
// Running engines ask it with every heartbeat.
func (s *Store) CampaignStopped(ctx context.Context, id int64) error {
	return managesql.Stopped(ctx, manageTx{s.db}, sqlite, id)
}

// PauseCampaign pauses a running campaign and returns the state it was in
// (managesql.Pause).
func (s *Store) PauseCampaign(ctx context.Context, id int64, reason string) (was campaign.CampaignState, err error) {
	err = s.write(ctx, func(tx *Tx) (err error) {
		was, err = managesql.Pause(ctx, manageTx{tx}, sqlite, id, reason)
		return err
	})
	return was, err
}

// CancelCampaign ends a running or paused campaign for good and returns the
// state it was in (managesql.Cancel).
func (s *Store) CancelCampaign(ctx context.Context, id int64) (was campaign.CampaignState, err error) {
	err = s.write(ctx, func(tx *Tx) (err error) {
		was, err = managesql.Cancel(ctx, manageTx{tx}, sqlite, id, s.now())
		return err
	})
	return was, err
}

// DeleteCampaign deletes a campaign with what it recorded, keeping whom it
// messaged (managesql.Delete).
func (s *Store) DeleteCampaign(ctx context.Context, id int64) error {
	return s.write(ctx, func(tx *Tx) error { return managesql.Delete(ctx, manageTx{tx}, sqlite, id, s.now()) })
}

// RenameCampaign gives a campaign a new name.
func (s *Store) RenameCampaign(ctx context.Context, id int64, name string) error {
	return s.write(ctx, func(tx *Tx) error { return managesql.Rename(ctx, manageTx{tx}, sqlite, id, name) })
}

// RequeueFailed moves failed rows back to pending (managesql.RequeueFailed)
// and returns how many moved.
func (s *Store) RequeueFailed(ctx context.Context, id int64, codes []int) (int, error) {
	return s.requeue(ctx, func(tx managesql.Tx) (int64, error) {
		return managesql.RequeueFailed(ctx, tx, sqlite, id, codes, s.now())
	})
}

// RequeueUnknown moves unknown rows back to pending
// (managesql.RequeueUnknown) and returns how many moved.
func (s *Store) RequeueUnknown(ctx context.Context, id int64) (int, error) {
	return s.requeue(ctx, func(tx managesql.Tx) (int64, error) { return managesql.RequeueUnknown(ctx, tx, sqlite, id, s.now()) })
}

// RequeueUndelivered moves sent rows no webhook reported delivered, sent
// before sentBefore, back to pending (managesql.RequeueUndelivered).
func (s *Store) RequeueUndelivered(ctx context.Context, id int64, sentBefore time.Time) (int, error) {
	return s.requeue(ctx, func(tx managesql.Tx) (int64, error) {
		return managesql.RequeueUndelivered(ctx, tx, sqlite, id, sentBefore, s.now())
	})
}

func (s *Store) requeue(ctx context.Context, fn func(tx managesql.Tx) (int64, error)) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *Tx) (err error) { n, err = fn(manageTx{tx}); return err })
	return int(n), err
}

func reopen(ctx context.Context, tx *Tx, id, moved int64) error {
	return managesql.Reopen(ctx, manageTx{tx}, sqlite, id, moved)
}

// ResumeCampaign unpauses a campaign and readmits the accounts dropped from
// it; it returns the reason it was paused, "" if it was not.
func (s *Store) ResumeCampaign(ctx context.Context, id int64) (reason string, err error) {
	err = s.write(ctx, func(tx *Tx) (err error) { reason, err = managesql.Resume(ctx, manageTx{tx}, sqlite, id); return err })
	return reason, err
}
