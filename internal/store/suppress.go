package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Suppression is a number that is never messaged: it opted out, asked to
// stop, or is known to be bad. Imports skip it.
type Suppression struct {
	Phone  string // E.164 with '+'
	Reason string // "" reads as "opted out"
	// CreatedAt is when the number was first listed. The store sets it;
	// Suppress ignores the field.
	CreatedAt time.Time
}

// Suppress lists numbers, all in one transaction, and returns how many were
// not listed before. A number already listed keeps the time it was first
// listed; its reason changes only when a non-empty one is given. Phones
// must be normalised to E.164 first: a number written any other way would
// never match an import.
func (s *Store) Suppress(ctx context.Context, list []Suppression) (added int, err error) {
	for _, sp := range list {
		if !isE164(sp.Phone) {
			return 0, fmt.Errorf("suppress %q: not an E.164 number", sp.Phone)
		}
	}
	if len(list) == 0 {
		return 0, nil
	}
	err = s.write(ctx, func(tx *Tx) error {
		added = 0 // write may retry fn after a busy error
		now := nanos(s.now())
		for _, sp := range list {
			res, err := tx.ExecContext(ctx, `INSERT INTO suppressions (phone, reason, created_at) VALUES (?, ?, ?)
				ON CONFLICT (phone) DO NOTHING`, sp.Phone, sp.Reason, now)
			if err != nil {
				return fmt.Errorf("suppress %s: %w", sp.Phone, err)
			}
			if n, _ := res.RowsAffected(); n > 0 {
				added++
				continue
			}
			if sp.Reason == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE suppressions SET reason = ? WHERE phone = ?`, sp.Reason, sp.Phone); err != nil {
				return fmt.Errorf("suppress %s: %w", sp.Phone, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return added, nil
}

// Unsuppress takes numbers off the list in one transaction and returns how
// many were on it.
func (s *Store) Unsuppress(ctx context.Context, phones []string) (removed int, err error) {
	if len(phones) == 0 {
		return 0, nil
	}
	err = s.write(ctx, func(tx *Tx) error {
		removed = 0
		for _, p := range phones {
			res, err := tx.ExecContext(ctx, `DELETE FROM suppressions WHERE phone = ?`, p)
			if err != nil {
				return fmt.Errorf("unsuppress %s: %w", p, err)
			}
			n, _ := res.RowsAffected()
			removed += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return removed, nil
}

// Suppressions returns the whole list, ordered by phone.
func (s *Store) Suppressions(ctx context.Context) ([]Suppression, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT phone, reason, created_at FROM suppressions ORDER BY phone`)
	if err != nil {
		return nil, fmt.Errorf("list suppressions: %w", err)
	}
	defer rows.Close()
	var out []Suppression
	for rows.Next() {
		var (
			sp      Suppression
			created int64
		)
		if err := rows.Scan(&sp.Phone, &sp.Reason, &created); err != nil {
			return nil, fmt.Errorf("list suppressions: %w", err)
		}
		sp.CreatedAt = fromNanos(created)
		out = append(out, sp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list suppressions: %w", err)
	}
	return out, nil
}

// IsSuppressed reports whether phone (E.164) is listed, and why.
func (s *Store) IsSuppressed(ctx context.Context, phone string) (reason string, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT reason FROM suppressions WHERE phone = ?`, phone).Scan(&reason)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("check suppression of %s: %w", phone, err)
	}
	return reason, true, nil
}

// isE164 is a shape check only (the store does not parse numbers): '+'
// and 2 to 15 digits, the first not 0.
func isE164(p string) bool {
	d, ok := strings.CutPrefix(p, "+")
	if !ok || len(d) < 2 || len(d) > 15 || d[0] == '0' {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// SyncMark is how far a copy of shared state has been applied: the
// source's epoch and the version of its last change applied.
type SyncMark struct {
	Epoch   string
	Version int64
}

// SharedSuppressionsMark is how far ApplySuppressions has applied the
// shared suppression list; the zero mark before the first time.
func (s *Store) SharedSuppressionsMark(ctx context.Context) (SyncMark, error) {
	var m SyncMark
	err := s.db.QueryRowContext(ctx, `SELECT epoch, version FROM shared_sync WHERE name = 'suppressions'`).Scan(&m.Epoch, &m.Version)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return m, fmt.Errorf("read how far the shared suppression list was copied: %w", err)
	}
	return m, nil
}

// ApplySuppressions makes the list agree with the list several hosts
// share, in one transaction with the mark of how far it now has: each of
// listed is on the list with exactly its reason, and each of removed is
// off it. A number listed here earlier keeps the earlier of the two
// times. Rows that already agree are not written.
func (s *Store) ApplySuppressions(ctx context.Context, listed []Suppression, removed []string, mark SyncMark) error {
	for _, sp := range listed {
		if !isE164(sp.Phone) {
			return fmt.Errorf("suppress %q: not an E.164 number", sp.Phone)
		}
	}
	return s.write(ctx, func(tx *Tx) error {
		now := s.now()
		for _, sp := range listed {
			at := sp.CreatedAt
			if at.IsZero() {
				at = now
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO suppressions (phone, reason, created_at) VALUES (?, ?, ?)
				ON CONFLICT (phone) DO UPDATE SET reason = excluded.reason, created_at = MIN(created_at, excluded.created_at)
				WHERE reason IS NOT excluded.reason OR created_at > excluded.created_at`, sp.Phone, sp.Reason, nanos(at))
			if err != nil {
				return fmt.Errorf("suppress %s: %w", sp.Phone, err)
			}
		}
		for _, p := range removed {
			if _, err := tx.ExecContext(ctx, `DELETE FROM suppressions WHERE phone = ?`, p); err != nil {
				return fmt.Errorf("unsuppress %s: %w", p, err)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO shared_sync (name, epoch, version) VALUES ('suppressions', ?, ?)
			ON CONFLICT (name) DO UPDATE SET epoch = excluded.epoch, version = excluded.version`, mark.Epoch, mark.Version)
		if err != nil {
			return fmt.Errorf("record how far the shared suppression list was copied: %w", err)
		}
		return nil
	})
}
