package store

import (
	"context"
	"database/sql"
	"fmt"
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

// nullNanos is t in Unix nanoseconds, NULL for the zero time.
func nullNanos(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}
