package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// windowColumns are a window as the campaigns table keeps it.
func windowColumns(w *campaign.Window) (from, to, days sql.NullInt64) {
	if w == nil {
		return
	}
	return sql.NullInt64{Int64: int64(w.From), Valid: true}, sql.NullInt64{Int64: int64(w.To), Valid: true},
		sql.NullInt64{Int64: int64(w.Days), Valid: true}
}

func windowFrom(from, to, days sql.NullInt64) *campaign.Window {
	if !from.Valid || !to.Valid || !days.Valid {
		return nil
	}
	return &campaign.Window{From: int(from.Int64), To: int(to.Int64), Days: uint8(days.Int64)}
}

// zoneSet returns the id of m's zone set, storing the set the first time
// the import meets it.
func (im *importer) zoneSet(ctx context.Context, m campaign.Message) (int64, error) {
	if m.Zones == "" {
		return 0, fmt.Errorf("line %d: no time zone for the send window (bug: the reader must give one)", m.Line)
	}
	if id, ok := im.zoneSets[m.Zones]; ok {
		return id, nil
	}
	if _, err := im.tx.ExecContext(ctx, `INSERT OR IGNORE INTO zone_sets (zones) VALUES (?)`, m.Zones); err != nil {
		return 0, fmt.Errorf("store time zones %s: %w", m.Zones, err)
	}
	var id int64
	if err := im.tx.QueryRowContext(ctx, `SELECT id FROM zone_sets WHERE zones = ?`, m.Zones).Scan(&id); err != nil {
		return 0, fmt.Errorf("store time zones %s: %w", m.Zones, err)
	}
	if im.zoneSets == nil {
		im.zoneSets = map[string]int64{}
	}
	im.zoneSets[m.Zones] = id
	return id, nil
}

// maxHeldPerClaim bounds how many rows one claim moves to their window's
// next opening before it gives up the lock: when a big zone's window
// closes, its rows are moved over a few claims, each short.
const maxHeldPerClaim = 2048

// holdOutsideWindow returns the due rows whose recipients' window is open
// now. The others wait: their next_attempt_at moves to the window's next
// opening, so they leave the front of the messages_due index and stop
// blocking rows that can go now — each row is looked at once per closed
// stretch of its window, not on every claim. A row whose window is never
// open in all of its zones at once fails with the reason.
func holdOutsideWindow(ctx context.Context, tx *Tx, w *campaign.Window, due []dueMessage, now time.Time) (open []dueMessage, held int, err error) {
	if len(due) == 0 {
		return due, 0, nil
	}
	ids := make([]any, len(due))
	for i, d := range due {
		ids[i] = d.ID
	}
	rows, err := tx.QueryContext(ctx, `SELECT m.id, z.zones, m.window_wait = 1 FROM messages m
		LEFT JOIN zone_sets z ON z.id = m.zone_set WHERE m.id IN (`+repeated(len(ids), "?")+`)`, ids...)
	if err != nil {
		return nil, 0, fmt.Errorf("read time zones of due rows: %w", err)
	}
	type zoneOf struct {
		set  sql.NullString
		wait bool
	}
	zones := make(map[int64]zoneOf, len(due))
	for rows.Next() {
		var id int64
		var z zoneOf
		if err := rows.Scan(&id, &z.set, &z.wait); err != nil {
			rows.Close()
			return nil, 0, fmt.Errorf("read time zones of due rows: %w", err)
		}
		zones[id] = z
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read time zones of due rows: %w", err)
	}
	var released []any
	for _, d := range due {
		z := zones[d.ID]
		if !z.set.Valid {
			open = append(open, d) // imported before the window: no zone to judge by
			continue
		}
		locs, err := campaign.LoadZones(z.set.String) // cached by name
		if err != nil {
			return nil, 0, fmt.Errorf("message %d: %w", d.ID, err)
		}
		next, ok := w.Next(now, locs)
		switch {
		case !ok:
			if err := failNeverOpen(ctx, tx, d.ID, fmt.Sprintf("send window %s is never open in all of the recipient's time zones (%s) at once",
				w, zoneNames(locs)), now); err != nil {
				return nil, 0, err
			}
		case next.After(now):
			if _, err := tx.ExecContext(ctx, `UPDATE messages SET next_attempt_at = ?, window_wait = 1 WHERE id = ?`,
				next.UnixNano(), d.ID); err != nil {
				return nil, 0, fmt.Errorf("hold message %d for its window: %w", d.ID, err)
			}
			held++
		default:
			if z.wait {
				released = append(released, d.ID)
			}
			open = append(open, d)
		}
	}
	if len(released) > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET window_wait = 0 WHERE id IN (`+repeated(len(released), "?")+`)`,
			released...); err != nil {
			return nil, 0, fmt.Errorf("release messages for their window: %w", err)
		}
	}
	return open, held, nil
}

func zoneNames(locs []*time.Location) string {
	names := make([]string, len(locs))
	for i, l := range locs {
		names[i] = l.String()
	}
	return strings.Join(names, ", ")
}

// windowWait turns a wait for a retry time into a wait for the send window
// when the first row to come due is held for its window.
func windowWait(ctx context.Context, tx *Tx, id int64, we *campaign.WaitError) error {
	var held bool
	err := tx.QueryRowContext(ctx, `SELECT window_wait = 1 FROM messages WHERE campaign_id = ? AND state = 'pending'
		ORDER BY next_attempt_at, id LIMIT 1`, id).Scan(&held)
	if err != nil && err != sql.ErrNoRows {
		return fmt.Errorf("campaign %d: %w", id, err)
	}
	if held {
		we.Reason = campaign.WaitWindow
	}
	return nil
}

// nextDueInWindow is nextDue for a campaign with a send window (w): due
// rows outside their window are held until it opens, and the next due
// rows are looked at instead, until some can go now or maxHeldPerClaim
// rows were held. Without a window it is nextDue.
func nextDueInWindow(ctx context.Context, tx *Tx, id int64, w *campaign.Window, now time.Time, n int) ([]dueMessage, error) {
	if w == nil {
		return nextDue(ctx, tx, id, now, n)
	}
	total := 0
	for {
		due, err := nextDue(ctx, tx, id, now, n)
		var we *campaign.WaitError
		if errors.As(err, &we) && we.Reason == campaign.WaitRetry {
			if werr := windowWait(ctx, tx, id, we); werr != nil {
				return nil, werr
			}
		}
		if err != nil {
			return nil, err
		}
		open, held, err := holdOutsideWindow(ctx, tx, w, due, now)
		if err != nil {
			return nil, err
		}
		if len(open) > 0 {
			return open, nil
		}
		// Rows failed for a window that never opens count too: the loop
		// always moves on.
		if total += max(held, 1); total >= maxHeldPerClaim {
			// Commit what was held, and look again at once.
			return nil, &campaign.WaitError{Reason: campaign.WaitWindow, Until: now}
		}
	}
}
