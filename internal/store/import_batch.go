package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/jsonstrings"
)

// AddBatch stores msgs, given in file order. Screening (duplicates, the
// suppression list, recent contacts) is the caller's, through
// internal/screen: every message given is stored. It returns no skips; the
// result stays for callers written when it screened.
//
// Rows are written with one multi-row INSERT per ImportBatch rows; the last
// few wait for more, or for Commit.
func (im *importer) AddBatch(ctx context.Context, msgs []campaign.Message) ([]campaign.Skip, error) {
	for _, m := range msgs {
		if im.pending = append(im.pending, m); len(im.pending) == driver.ImportBatch {
			if err := im.flush(ctx); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}

// flush writes im.pending with one INSERT.
func (im *importer) flush(ctx context.Context) error {
	msgs := im.pending
	if len(msgs) == 0 {
		return nil
	}
	defer func() {
		clear(msgs) // don't keep this batch's strings alive
		im.pending = msgs[:0]
	}()
	// Every cgo call to bind a value costs about as much as SQLite's work
	// on it: body and extras are bound only when some row has them.
	plain := true
	for _, m := range msgs {
		plain = plain && m.Body == "" && m.Header == "" && len(m.Buttons) == 0
	}
	row := "(%d, ?, ?, ?, ?, ?, ?, 0"
	if plain {
		row = "(%d, ?, ?, ?, ?, '', '{}', 0"
	}
	head := `INSERT INTO messages (campaign_id, line, input, phone, params, body, extras, next_attempt_at`
	zoned := im.c.Schedule.Window != nil
	if zoned {
		head, row = head+", zone_set", row+", ?"
	}
	st, closeStmt, err := im.batchStmt(ctx, len(msgs), head+`) VALUES `, row+")", "")
	if err != nil {
		return err
	}
	defer closeStmt()
	args := im.args[:0]
	var buf []byte
	for _, m := range msgs {
		buf = jsonstrings.Append(buf[:0], m.Params)
		args = append(args, m.Line, m.Input, m.Phone, string(buf))
		if !plain {
			extras := "{}"
			if m.Header != "" || len(m.Buttons) > 0 {
				if extras, err = marshalExtras(m); err != nil {
					return err
				}
			}
			args = append(args, m.Body, extras)
		}
		if zoned {
			id, err := im.zoneSet(ctx, m)
			if err != nil {
				return err
			}
			args = append(args, id)
		}
	}
	_, err = st.ExecContext(ctx, args...)
	clear(args)
	im.args = args[:0]
	if err != nil {
		return fmt.Errorf("store lines %d-%d: %w", msgs[0].Line, msgs[len(msgs)-1].Line, err)
	}
	im.c.Imported += len(msgs)
	if im.prefixes == nil {
		im.prefixes = map[string]int64{}
	}
	for _, m := range msgs {
		im.prefixes[pricing.NumberPrefix(m.Phone)]++
	}
	return nil
}

// SkipBatch records rows that were not imported, and why, with one
// multi-row INSERT per ImportBatch rows.
func (im *importer) SkipBatch(ctx context.Context, skips []campaign.Skip) error {
	for len(skips) > 0 {
		n := min(len(skips), driver.ImportBatch)
		if err := im.skipBatch(ctx, skips[:n]); err != nil {
			return err
		}
		skips = skips[n:]
	}
	return nil
}

func (im *importer) skipBatch(ctx context.Context, skips []campaign.Skip) error {
	st, closeStmt, err := im.batchStmt(ctx, len(skips), `INSERT INTO skipped (campaign_id, line, input, reason) VALUES `, "(%d, ?, ?, ?)", "")
	if err != nil {
		return err
	}
	defer closeStmt()
	args := im.args[:0]
	for _, k := range skips {
		args = append(args, k.Line, k.Input, k.Reason)
	}
	_, err = st.ExecContext(ctx, args...)
	clear(args)
	im.args = args[:0]
	if err != nil {
		return fmt.Errorf("record skipped lines %d-%d: %w", skips[0].Line, skips[len(skips)-1].Line, err)
	}
	im.c.Skipped += len(skips)
	return nil
}

// batchStmt prepares head + n × row (whose %d is the campaign id) + tail.
// Full batches come back often and are kept until the import ends; the
// caller closes the others with closeStmt.
func (im *importer) batchStmt(ctx context.Context, n int, head, row, tail string) (st *sql.Stmt, closeStmt func(), err error) {
	full := n == driver.ImportBatch
	key := head + row + strconv.Itoa(n)
	if st := im.batch[key]; st != nil && full {
		return st, func() {}, nil
	}
	row = fmt.Sprintf(row, im.c.ID)
	var q strings.Builder
	q.Grow(len(head) + n*(len(row)+2) + len(tail))
	q.WriteString(head)
	for i := range n {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(row)
	}
	q.WriteString(tail)
	st, err = im.tx.PrepareContext(ctx, q.String())
	if err != nil {
		return nil, nil, fmt.Errorf("prepare import: %w", err)
	}
	if !full {
		return st, func() { st.Close() }, nil
	}
	if im.batch == nil {
		im.batch = map[string]*sql.Stmt{}
	}
	im.batch[key] = st
	return st, func() {}, nil
}

func placeholders(n int) string { return repeated(n, "?") }
