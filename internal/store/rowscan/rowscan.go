// Package rowscan turns the store's rows into domain values the same way
// on every driver: the campaign and account columns, the JSON columns'
// formats, the instants kept as Unix nanoseconds. Each driver keeps its
// own SQL (placeholders, booleans) and hands its rows here; a Scanner is
// a *sql.Row or *sql.Rows as well as a pgx.Row or pgx.Rows.
package rowscan

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Scanner is one row of a query.
type Scanner interface{ Scan(dest ...any) error }

// CampaignCols are the columns Campaign reads, in its order.
const CampaignCols = `id, name, fingerprint, source, kind, template, lang, params, text, shape, state, pause_reason,
	created_at, finished_at, imported, skipped, cancelled_at, start_at, began_at, expire_after, expires_at,
	window_from, window_to, window_days, default_tz, priority, weight, borrow`

// Campaign reads a campaign from a row of CampaignCols, then any extra
// columns into extra.
func Campaign(sc Scanner, extra ...any) (campaign.Campaign, error) {
	var (
		c                                  campaign.Campaign
		params, shape                      string
		created, expire, borrow            int64
		finished, canceled, startAt, began sql.NullInt64
		expires, wf, wt, wd                sql.NullInt64
	)
	dest := []any{&c.ID, &c.Name, &c.Fingerprint, &c.Source, &c.Spec.Kind, &c.Spec.Template, &c.Spec.Lang,
		&params, &c.Spec.Text, &shape, &c.State, &c.PauseReason, &created, &finished, &c.Imported, &c.Skipped, &canceled,
		&startAt, &began, &expire, &expires, &wf, &wt, &wd, &c.Schedule.DefaultTZ,
		&c.Share.Priority, &c.Share.Weight, &borrow}
	if err := sc.Scan(append(dest, extra...)...); err != nil {
		return c, err
	}
	if canceled.Valid {
		// Stored as finished (see migration 0007), shown as what it is.
		c.State = campaign.CampaignCancelled
	}
	if err := json.Unmarshal([]byte(params), &c.Spec.Params); err != nil {
		return c, fmt.Errorf("campaign %d params: %w", c.ID, err)
	}
	var sh Shape
	if err := json.Unmarshal([]byte(shape), &sh); err != nil {
		return c, fmt.Errorf("campaign %d template shape: %w", c.ID, err)
	}
	sh.Apply(&c.Spec)
	c.CreatedAt = FromNanos(created)
	c.FinishedAt = FromNullNanos(finished)
	c.Schedule.StartAt = FromNullNanos(startAt)
	c.Schedule.ExpireAfter = time.Duration(expire)
	c.BeganAt = FromNullNanos(began)
	c.Deadline = FromNullNanos(expires)
	c.Schedule.Window = Window(wf, wt, wd)
	c.Share.Borrow = time.Duration(borrow)
	return c, nil
}

// Shape is the campaigns.shape column: the parts of a spec beyond
// positional body parameters. The JSON names are the column's format.
type Shape struct {
	NamedParams bool          `json:"named_params,omitempty"`
	Header      *shapeHeader  `json:"header,omitempty"`
	Buttons     []shapeButton `json:"buttons,omitempty"`
}

type shapeHeader struct {
	Type   string `json:"type"`
	Column string `json:"column"`
}

type shapeButton struct {
	Index  int    `json:"index"`
	Column string `json:"column"`
}

// ShapeOf is sp's shape, as the column keeps it.
func ShapeOf(sp campaign.Spec) Shape {
	sh := Shape{NamedParams: sp.NamedParams}
	if h := sp.Header; h != nil {
		sh.Header = &shapeHeader{Type: string(h.Type), Column: h.Column}
	}
	for _, b := range sp.Buttons {
		sh.Buttons = append(sh.Buttons, shapeButton(b))
	}
	return sh
}

// Apply sets sp's shape to sh.
func (sh Shape) Apply(sp *campaign.Spec) {
	sp.NamedParams = sh.NamedParams
	if h := sh.Header; h != nil {
		sp.Header = &campaign.Header{Type: campaign.HeaderType(h.Type), Column: h.Column}
	}
	for _, b := range sh.Buttons {
		sp.Buttons = append(sp.Buttons, campaign.Button(b))
	}
}

// Window is a campaign's send window from its three columns: nil when
// any is NULL.
func Window(from, to, days sql.NullInt64) *campaign.Window {
	if !from.Valid || !to.Valid || !days.Valid {
		return nil
	}
	return &campaign.Window{From: int(from.Int64), To: int(to.Int64), Days: uint8(days.Int64)}
}

// Nanos is t as kept: Unix nanoseconds, 0 for none (FromNanos reads it).
func Nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// FromNanos is an instant kept as Unix nanoseconds, 0 for none.
func FromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// FromNullNanos is FromNanos, NULL for none too.
func FromNullNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return FromNanos(n.Int64)
}

// All reads every row of a query's result (rows, err) with scan, and
// closes rows.
func All[T any](rows *sql.Rows, err error, scan func(*sql.Rows, *T) error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
