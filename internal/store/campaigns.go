package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// importer is SQLite's Importer: one campaign's rows in a single
// transaction.
type importer struct {
	s    *Store
	tx   *sql.Tx
	c    campaign.Campaign
	skip *sql.Stmt
	// batch holds AddBatch's and SkipBatch's multi-row statements by query
	// text; args is their argument buffer, reused across batches.
	batch map[string]*sql.Stmt
	args  []any
	// pending are rows to store, written ImportBatch at a time.
	pending []campaign.Message
	// sourceKey and recipientsKey are stored by Commit (see SetKeys).
	sourceKey, recipientsKey string
	// zoneSets are the ids of the zone sets stored so far (send windows).
	zoneSets map[string]int64
	// prefixes counts the rows stored by number prefix (cost_counts).
	prefixes map[string]int64
	done     bool
}

// Import holds this process's write lock until Commit or Rollback: the
// import is one transaction so a half-read file never becomes a campaign.
func (s *Store) Import(ctx context.Context, c campaign.Campaign) (driver.Importer, error) {
	if err := campaign.ValidateName(c.Name); err != nil {
		return nil, err
	}
	s.wmu.Lock()
	tx, err := s.beginImport(context.WithoutCancel(ctx))
	if err != nil {
		s.wmu.Unlock()
		return nil, fmt.Errorf("begin import: %w", s.storageError(err))
	}
	im := &importer{s: s, tx: tx, c: c}
	if err := im.start(ctx); err != nil {
		im.Rollback()
		return nil, err
	}
	return im, nil
}

func (im *importer) start(ctx context.Context) error {
	params, err := json.Marshal(nonNil(im.c.Spec.Params))
	if err != nil {
		return err
	}
	shape, err := json.Marshal(rowscan.ShapeOf(im.c.Spec))
	if err != nil {
		return err
	}
	now := im.s.now()
	// fingerprint is unique per campaign; without one given, the campaign
	// number is (set once it is known).
	fp := im.c.Fingerprint
	if fp == "" {
		fp = fmt.Sprintf("importing-%d", now.UnixNano())
	}
	wf, wt, wd := windowColumns(im.c.Schedule.Window)
	res, err := im.tx.ExecContext(ctx, `INSERT INTO campaigns
		(name, fingerprint, source, kind, template, lang, params, text, shape, state, created_at, start_at, expire_after,
		expires_at, start_arg, window_from, window_to, window_days, default_tz, priority, weight, borrow)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		im.c.Name, fp, im.c.Source, string(im.c.Spec.Kind), im.c.Spec.Template, im.c.Spec.Lang,
		string(params), im.c.Spec.Text, string(shape), now.UnixNano(),
		nullNanos(im.c.Schedule.StartAt), int64(im.c.Schedule.ExpireAfter), nullNanos(im.c.Schedule.Deadline(im.c.Schedule.StartAt)), im.c.Schedule.StartArg,
		wf, wt, wd, im.c.Schedule.DefaultTZ,
		int(im.c.Share.Priority), max(im.c.Share.Weight, 1), int64(im.c.Share.Borrow))
	if err != nil {
		if isUnique(err) {
			return fmt.Errorf("campaign with the same file and message: %w", driver.ErrExists)
		}
		return fmt.Errorf("create campaign: %w", err)
	}
	im.c.ID, _ = res.LastInsertId()
	if im.c.Fingerprint == "" {
		im.c.Fingerprint = fmt.Sprintf("campaign-%d", im.c.ID)
		if _, err := im.tx.ExecContext(ctx, `UPDATE campaigns SET fingerprint = ? WHERE id = ?`, im.c.Fingerprint, im.c.ID); err != nil {
			return fmt.Errorf("create campaign: %w", err)
		}
	}
	im.c.CreatedAt = now
	im.c.State = campaign.CampaignRunning
	prep := func(dst **sql.Stmt, q string) error {
		st, err := im.tx.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare import: %w", err)
		}
		*dst = st
		return nil
	}
	return prep(&im.skip, `INSERT INTO skipped (campaign_id, line, input, reason) VALUES (?, ?, ?, ?)`)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// messageExtras is the messages.extras column: a row's header and button
// values.
type messageExtras struct {
	Header  string   `json:"header,omitempty"`
	Buttons []string `json:"buttons,omitempty"`
}

func marshalExtras(m campaign.Message) (string, error) {
	b, err := json.Marshal(messageExtras{Header: m.Header, Buttons: m.Buttons})
	return string(b), err
}

func unmarshalExtras(s string, m *campaign.Message) error {
	if s == "{}" { // what all but a few rows hold: no header, no buttons
		m.Header, m.Buttons = "", nil
		return nil
	}
	var x messageExtras
	if err := json.Unmarshal([]byte(s), &x); err != nil {
		return err
	}
	m.Header, m.Buttons = x.Header, x.Buttons
	return nil
}

// Add stores one recipient; see AddBatch. The reason is always "".
func (im *importer) Add(ctx context.Context, m campaign.Message) (reason string, err error) {
	skips, err := im.AddBatch(ctx, []campaign.Message{m})
	if err != nil || len(skips) == 0 {
		return "", err
	}
	return skips[0].Reason, nil
}

// Skip records a row that was not imported and why.
func (im *importer) Skip(ctx context.Context, line int, input, reason string) error {
	if _, err := im.skip.ExecContext(ctx, im.c.ID, line, input, reason); err != nil {
		return fmt.Errorf("record skipped line %d: %w", line, err)
	}
	im.c.Skipped++
	return nil
}

// Commit makes the campaign and all its rows visible at once.
func (im *importer) Commit(ctx context.Context) (campaign.Campaign, error) {
	if im.done {
		return im.c, errors.New("import already finished")
	}
	err := im.flush(ctx)
	if err == nil {
		_, err = im.tx.ExecContext(ctx, `UPDATE campaigns SET imported = ?, skipped = ?, source_key = ?, recipients_key = ? WHERE id = ?`,
			im.c.Imported, im.c.Skipped, im.sourceKey, im.recipientsKey, im.c.ID)
	}
	if err == nil && im.c.Imported > 0 {
		// The import is the one place messages are inserted, and counts
		// them here once rather than by a trigger per row (migration 0010).
		_, err = im.tx.ExecContext(ctx, `INSERT INTO message_counts (campaign_id, account_id, state, n)
			VALUES (?, 0, 'pending', ?) ON CONFLICT DO UPDATE SET n = n + excluded.n`, im.c.ID, im.c.Imported)
	}
	if err == nil {
		err = addCostCounts(ctx, im.tx, im.c.ID, im.prefixes)
	}
	if err == nil {
		err = im.tx.Commit()
	}
	im.finish()
	if err != nil {
		im.tx.Rollback()
		return im.c, fmt.Errorf("commit import: %w", err)
	}
	return im.c, nil
}

// Rollback discards the import. It is safe to call after Commit.
func (im *importer) Rollback() {
	if im.done {
		return
	}
	im.tx.Rollback()
	im.finish()
}

func (im *importer) finish() {
	for _, st := range []*sql.Stmt{im.skip} {
		if st != nil {
			st.Close()
		}
	}
	for _, st := range im.batch {
		st.Close()
	}
	im.s.endImport()
	im.done = true
	im.s.wmu.Unlock()
}

// importCacheKiB is an import's page cache. An import only appends (to the table and
// to indexes whose keys grow with it), so 1 MiB does as well as 4 (a million rows in
// the same CPU, 3 MiB less RSS), and the memory goes to finding duplicates instead.
const importCacheKiB = 1024

// beginImport begins an import's transaction on the writer connection,
// set up for it. The caller holds wmu.
//
// Besides the smaller cache, the import keeps statement journals in
// memory: a multi-row INSERT that may fail halfway (a foreign key, a NOT
// NULL) journals every page it changes so that it can be undone alone, and
// by default that journal spills to a temporary file past 64 KiB, which is
// every batch of a big import. In memory it is a few hundred KiB at most.
// Its begins wait for another process's lock in SQLite (not lockwait). The
// settings are taken when a transaction begins; endImport undoes them.
func (c *conn) beginImport(ctx context.Context) (*sql.Tx, error) {
	w, err := c.writer(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := w.ExecContext(ctx, fmt.Sprintf(`PRAGMA temp_store = MEMORY; PRAGMA cache_size = -%d; PRAGMA busy_timeout = %d`, importCacheKiB, c.busyTimeout.Milliseconds())); err != nil {
		c.endImport()
		return nil, err
	}
	tx, err := c.beginWrite(ctx)
	if err != nil {
		c.endImport()
	}
	return tx, err
}

// endImport restores the writer connection's settings, or discards it when
// they can't be. The caller holds wmu.
func (c *conn) endImport() {
	c.ckpt.Wrote() // what it wrote is checkpointed after it ends
	if c.w == nil {
		return
	}
	if _, err := c.w.ExecContext(context.Background(), fmt.Sprintf(`PRAGMA temp_store = DEFAULT; PRAGMA cache_size = -%d; PRAGMA busy_timeout = 0`, cacheKiB)); err != nil {
		c.dropWriter()
	}
	c.wMem = false
}

// Campaign returns one campaign by number.
func (s *Store) Campaign(ctx context.Context, id int64) (campaign.Campaign, error) {
	c, err := rowscan.Campaign(s.db.QueryRowContext(ctx, `SELECT `+rowscan.CampaignCols+` FROM campaigns WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	}
	return c, err
}

// Counts returns a campaign's messages by state. It reads the counts kept
// by migration 0010's triggers, not the messages.
func (s *Store) Counts(ctx context.Context, id int64) (campaign.Counts, error) {
	return counts(ctx, s.db, id)
}

// counts sums a campaign's message_counts over accounts; storetest.CheckCounts
// holds them equal to the messages.
func counts(ctx context.Context, q querier, id int64) (campaign.Counts, error) {
	rows, err := q.QueryContext(ctx, `SELECT state, sum(n) FROM message_counts WHERE campaign_id = ?
		GROUP BY state HAVING sum(n) <> 0`, id)
	if err != nil {
		return nil, fmt.Errorf("count messages: %w", err)
	}
	defer rows.Close()
	out := campaign.Counts{}
	for rows.Next() {
		var st campaign.State
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		out[st] = n
	}
	return out, rows.Err()
}
