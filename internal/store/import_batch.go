package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wasend/wasend/internal/campaign"
)

// ImportBatch is how many rows AddBatch and SkipBatch put in one INSERT.
// Each statement through database/sql and cgo costs about as much as
// storing a few rows; past a few hundred rows per statement nothing more
// is gained.
const ImportBatch = 256

// AddBatch stores msgs, given in file order. It returns the messages it
// did not store, in file order, with the reasons Add gives: a number
// already in the campaign (the first line with it wins) or on the
// suppression list.
//
// Rows are written with one multi-row INSERT per ImportBatch rows; the last
// few wait for more, or for Commit.
func (im *Importer) AddBatch(ctx context.Context, msgs []campaign.Message) ([]campaign.Skip, error) {
	var skips []campaign.Skip
	for len(msgs) > 0 {
		n := min(len(msgs), ImportBatch)
		var err error
		if skips, err = im.queue(ctx, msgs[:n], skips); err != nil {
			return nil, err
		}
		msgs = msgs[n:]
	}
	return skips, nil
}

// queue appends to im.pending the msgs to store and to skips the others,
// and writes every full batch.
func (im *Importer) queue(ctx context.Context, msgs []campaign.Message, skips []campaign.Skip) ([]campaign.Skip, error) {
	var why map[string]string
	if im.suppressions {
		var err error
		if why, err = im.suppressedIn(ctx, msgs); err != nil {
			return nil, err
		}
	}
	for _, m := range msgs {
		if reason, ok := why[m.Phone]; ok {
			skips = append(skips, campaign.Skip{Line: m.Line, Input: m.Input, Reason: reason})
			continue
		}
		if first, dup := im.numbers.Add(m.Phone, m.Line); dup {
			skips = append(skips, duplicate(m, first))
			continue
		}
		if im.pending = append(im.pending, m); len(im.pending) == ImportBatch {
			if err := im.flush(ctx); err != nil {
				return nil, err
			}
		}
	}
	return skips, nil
}

// flush writes im.pending with one INSERT.
func (im *Importer) flush(ctx context.Context) error {
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
		buf = appendJSONStrings(buf[:0], m.Params)
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
	return nil
}

func duplicate(m campaign.Message, first int) campaign.Skip {
	return campaign.Skip{Line: m.Line, Input: m.Input, Reason: fmt.Sprintf("duplicate of line %d (%s)", first, m.Phone)}
}

// suppressedIn returns the reasons of the numbers of msgs that are on the
// suppression list, by number.
func (im *Importer) suppressedIn(ctx context.Context, msgs []campaign.Message) (map[string]string, error) {
	phones := distinctPhones(msgs)
	rows, err := im.tx.QueryContext(ctx, `SELECT phone, reason FROM suppressions WHERE phone IN (`+placeholders(len(phones))+`)`, phones...)
	if err != nil {
		return nil, fmt.Errorf("check suppression list: %w", err)
	}
	defer rows.Close()
	var why map[string]string
	for rows.Next() {
		var phone, reason string
		if err := rows.Scan(&phone, &reason); err != nil {
			return nil, fmt.Errorf("check suppression list: %w", err)
		}
		if why == nil {
			why = map[string]string{}
		}
		if reason == "" {
			why[phone] = "suppressed (opted out)"
		} else {
			why[phone] = "suppressed: " + reason
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("check suppression list: %w", err)
	}
	return why, nil
}

// SkipBatch records rows that were not imported, and why, with one
// multi-row INSERT per ImportBatch rows.
func (im *Importer) SkipBatch(ctx context.Context, skips []campaign.Skip) error {
	for len(skips) > 0 {
		n := min(len(skips), ImportBatch)
		if err := im.skipBatch(ctx, skips[:n]); err != nil {
			return err
		}
		skips = skips[n:]
	}
	return nil
}

func (im *Importer) skipBatch(ctx context.Context, skips []campaign.Skip) error {
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
func (im *Importer) batchStmt(ctx context.Context, n int, head, row, tail string) (st *sql.Stmt, closeStmt func(), err error) {
	full := n == ImportBatch
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

func distinctPhones(msgs []campaign.Message) []any {
	seen := make(map[string]bool, len(msgs))
	phones := make([]any, 0, len(msgs))
	for _, m := range msgs {
		if !seen[m.Phone] {
			seen[m.Phone] = true
			phones = append(phones, m.Phone)
		}
	}
	return phones
}

// appendJSONStrings appends ss as a JSON array, byte for byte what
// json.Marshal writes (nil as []), without its reflection and allocations
// for the plain strings most parameters are.
func appendJSONStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		if plainJSON(s) {
			b = append(b, '"')
			b = append(b, s...)
			b = append(b, '"')
			continue
		}
		q, _ := json.Marshal(s) // a string always marshals
		b = append(b, q...)
	}
	return append(b, ']')
}

// plainJSON reports whether json.Marshal writes s unchanged between quotes:
// valid UTF-8 without control characters, '"', '\\', the HTML characters
// it escapes, or U+2028/U+2029.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		case c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9):
			return false
		}
	}
	return utf8.ValidString(s)
}
