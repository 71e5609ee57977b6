package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// messageExtras is the messages.extras column: a row's header and button
// values.
type messageExtras struct {
	Header  string   `json:"header,omitempty"`
	Buttons []string `json:"buttons,omitempty"`
}

func nullNanos(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	n := t.UnixNano()
	return &n
}

// fromNullNanos reads a nullable nanosecond column (NULL: the zero time).
func fromNullNanos(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return rowscan.FromNanos(*n)
}

func windowColumns(w *campaign.Window) (from, to, days *int64) {
	if w == nil {
		return nil, nil, nil
	}
	f, t, d := int64(w.From), int64(w.To), int64(w.Days)
	return &f, &t, &d
}

// Campaign returns one campaign by number.
func (s *Store) Campaign(ctx context.Context, id int64) (campaign.Campaign, error) {
	c, err := rowscan.Campaign(s.pool.QueryRow(ctx, `SELECT `+rowscan.CampaignCols+` FROM campaigns WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	}
	if err != nil {
		return c, fmt.Errorf("read campaign %d: %w", id, err)
	}
	return c, nil
}

// CampaignBySource finds the newest campaign imported under a source key
// (on SQLite a read model: readmodel.CampaignBySource).
func (s *Store) CampaignBySource(ctx context.Context, key string) (campaign.Campaign, error) {
	c, err := rowscan.Campaign(s.pool.QueryRow(ctx, `SELECT `+rowscan.CampaignCols+` FROM campaigns
		WHERE source_key = $1 ORDER BY id DESC LIMIT 1`, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("campaign of source %s: %w", key, campaign.ErrNotFound)
	}
	if err != nil {
		return c, fmt.Errorf("read campaign of source %s: %w", key, err)
	}
	return c, nil
}

// Counts is a campaign's rows by state, from the counts every move keeps.
func (s *Store) Counts(ctx context.Context, id int64) (campaign.Counts, error) {
	rows, err := s.pool.Query(ctx, `SELECT state, sum(n) FROM message_counts WHERE campaign_id = $1
		GROUP BY state HAVING sum(n) <> 0`, id)
	if err != nil {
		return nil, fmt.Errorf("count messages: %w", err)
	}
	defer rows.Close()
	out := campaign.Counts{}
	for rows.Next() {
		var (
			st string
			n  int64
		)
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("count messages: %w", err)
		}
		out[campaign.State(st)] = int(n)
	}
	return out, rows.Err()
}

// importer is one campaign's import in one transaction: rows go in with
// COPY, ImportBatch at a time.
type importer struct {
	s       *Store
	tx      pgx.Tx
	c       campaign.Campaign
	pending []campaign.Message
	zones   map[string]int64
	done    bool
	// prefixes counts the rows stored by number prefix (cost_counts).
	prefixes map[string]int64

	sourceKey, recipientsKey string
}

var _ driver.Importer = (*importer)(nil)

// Import starts a campaign's import in one transaction (driver.ErrExists
// for a fingerprint already imported: a second import of it waits for the
// first to end, then fails).
func (s *Store) Import(ctx context.Context, c campaign.Campaign) (driver.Importer, error) {
	if err := campaign.ValidateName(c.Name); err != nil {
		return nil, err
	}
	tx, err := s.pool.Begin(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fmt.Errorf("begin import: %w", err)
	}
	im := &importer{s: s, tx: tx, c: c}
	if err := im.start(ctx); err != nil {
		im.Rollback()
		return nil, err
	}
	return im, nil
}

func (im *importer) start(ctx context.Context) error {
	params := im.c.Spec.Params
	if params == nil {
		params = []string{}
	}
	pj, err := json.Marshal(params)
	if err != nil {
		return err
	}
	shape, err := json.Marshal(rowscan.ShapeOf(im.c.Spec))
	if err != nil {
		return err
	}
	now := im.s.now()
	fp := im.c.Fingerprint
	if fp == "" {
		fp = fmt.Sprintf("importing-%d", now.UnixNano())
	}
	sc := im.c.Schedule
	wf, wt, wd := windowColumns(sc.Window)
	err = im.tx.QueryRow(ctx, `INSERT INTO campaigns
		(name, fingerprint, source, kind, template, lang, params, text, shape, state, created_at, start_at, expire_after,
		expires_at, start_arg, window_from, window_to, window_days, default_tz, priority, weight, borrow)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'running', $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
		RETURNING id`,
		im.c.Name, fp, im.c.Source, string(im.c.Spec.Kind), im.c.Spec.Template, im.c.Spec.Lang,
		string(pj), im.c.Spec.Text, string(shape), now.UnixNano(),
		nullNanos(sc.StartAt), int64(sc.ExpireAfter), nullNanos(sc.Deadline(sc.StartAt)), sc.StartArg,
		wf, wt, wd, sc.DefaultTZ, int(im.c.Share.Priority), max(im.c.Share.Weight, 1), int64(im.c.Share.Borrow)).Scan(&im.c.ID)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" {
			return fmt.Errorf("campaign with the same file and message: %w", driver.ErrExists)
		}
		return fmt.Errorf("create campaign: %w", err)
	}
	if im.c.Fingerprint == "" {
		im.c.Fingerprint = fmt.Sprintf("campaign-%d", im.c.ID)
		if _, err := im.tx.Exec(ctx, `UPDATE campaigns SET fingerprint = $1 WHERE id = $2`, im.c.Fingerprint, im.c.ID); err != nil {
			return fmt.Errorf("create campaign: %w", err)
		}
	}
	im.c.CreatedAt = now
	im.c.State = campaign.CampaignRunning
	return nil
}

// AddBatch stores rows given in file order; they wait for ImportBatch of
// them, or for Commit. Screening is the caller's: every row is stored.
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

// Add stores one row; see AddBatch. The reason is always "".
func (im *importer) Add(ctx context.Context, m campaign.Message) (string, error) {
	_, err := im.AddBatch(ctx, []campaign.Message{m})
	return "", err
}

// flush copies the pending rows in.
func (im *importer) flush(ctx context.Context) error {
	msgs := im.pending
	if len(msgs) == 0 {
		return nil
	}
	defer func() {
		clear(msgs)
		im.pending = msgs[:0]
	}()
	rows := make([][]any, len(msgs))
	for i, m := range msgs {
		params := m.Params
		if params == nil {
			params = []string{}
		}
		pj, err := json.Marshal(params)
		if err != nil {
			return err
		}
		extras := []byte("{}")
		if m.Header != "" || len(m.Buttons) > 0 {
			if extras, err = json.Marshal(messageExtras{Header: m.Header, Buttons: m.Buttons}); err != nil {
				return err
			}
		}
		var zone *int64
		if im.c.Schedule.Window != nil {
			id, err := im.zoneSet(ctx, m)
			if err != nil {
				return err
			}
			zone = &id
		}
		rows[i] = []any{im.c.ID, int64(m.Line), m.Input, m.Phone, string(pj), m.Body, string(extras), int64(0), zone}
	}
	_, err := im.tx.CopyFrom(ctx, pgx.Identifier{"messages"},
		[]string{"campaign_id", "line", "input", "phone", "params", "body", "extras", "next_attempt_at", "zone_set"},
		pgx.CopyFromRows(rows))
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

// zoneSet is the id of m's zone set, stored the first time it is met.
func (im *importer) zoneSet(ctx context.Context, m campaign.Message) (int64, error) {
	if m.Zones == "" {
		return 0, fmt.Errorf("line %d: no time zone for the send window (bug: the reader must give one)", m.Line)
	}
	if id, ok := im.zones[m.Zones]; ok {
		return id, nil
	}
	var id int64
	err := im.tx.QueryRow(ctx, `WITH ins AS (INSERT INTO zone_sets (zones) VALUES ($1) ON CONFLICT (zones) DO NOTHING RETURNING id)
		SELECT id FROM ins UNION ALL SELECT id FROM zone_sets WHERE zones = $1 LIMIT 1`, m.Zones).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store time zones %s: %w", m.Zones, err)
	}
	if im.zones == nil {
		im.zones = map[string]int64{}
	}
	im.zones[m.Zones] = id
	return id, nil
}

// SkipBatch records rows not imported and why.
func (im *importer) SkipBatch(ctx context.Context, skips []campaign.Skip) error {
	if len(skips) == 0 {
		return nil
	}
	rows := make([][]any, len(skips))
	for i, k := range skips {
		rows[i] = []any{im.c.ID, int64(k.Line), k.Input, k.Reason}
	}
	if _, err := im.tx.CopyFrom(ctx, pgx.Identifier{"skipped"}, []string{"campaign_id", "line", "input", "reason"},
		pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("record skipped lines %d-%d: %w", skips[0].Line, skips[len(skips)-1].Line, err)
	}
	im.c.Skipped += len(skips)
	return nil
}

// Skip records one row not imported and why.
func (im *importer) Skip(ctx context.Context, line int, input, reason string) error {
	return im.SkipBatch(ctx, []campaign.Skip{{Line: line, Input: input, Reason: reason}})
}

// SetKeys sets the source and recipients keys Commit stores.
func (im *importer) SetKeys(source, recipients string) {
	im.sourceKey, im.recipientsKey = source, recipients
}

// SameMessage returns the campaigns, newest first, that send the same
// message as the one being imported. It first takes a lock on the message
// for the import's transaction: another import of it waits until this one
// ends, then sees what it made, as under SQLite's single writer.
func (im *importer) SameMessage(ctx context.Context) ([]driver.Sibling, error) {
	sp := im.c.Spec
	if _, err := im.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
		strings.Join([]string{string(sp.Kind), sp.Template, sp.Lang, sp.Text}, "\x1f")); err != nil {
		return nil, fmt.Errorf("find campaigns with the same message: %w", err)
	}
	rows, err := im.tx.Query(ctx, `SELECT `+rowscan.CampaignCols+`, recipients_key FROM campaigns
		WHERE id <> $1 AND kind = $2 AND template = $3 AND lang = $4 AND text = $5 ORDER BY id DESC`,
		im.c.ID, string(sp.Kind), sp.Template, sp.Lang, sp.Text)
	if err != nil {
		return nil, fmt.Errorf("find campaigns with the same message: %w", err)
	}
	sibs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (sb driver.Sibling, err error) {
		sb.Campaign, err = rowscan.Campaign(row, &sb.RecipientsKey)
		return sb, err
	})
	if err != nil {
		return nil, fmt.Errorf("find campaigns with the same message: %w", err)
	}
	return slices.DeleteFunc(sibs, func(sb driver.Sibling) bool { return !sb.Campaign.Spec.SameMessage(sp) }), nil
}

// EachNumber calls fn with every number of campaign id, inside the
// import's transaction.
func (im *importer) EachNumber(ctx context.Context, id int64, fn func(phone string)) error {
	rows, err := im.tx.Query(ctx, `SELECT phone FROM messages WHERE campaign_id = $1`, id)
	if err != nil {
		return fmt.Errorf("read the numbers of campaign %d: %w", id, err)
	}
	var phone string
	_, err = pgx.ForEachRow(rows, []any{&phone}, func() error { fn(phone); return nil })
	if err != nil {
		return fmt.Errorf("read the numbers of campaign %d: %w", id, err)
	}
	return nil
}

// ContinueInto ends the import by adding its rows to the unfinished
// campaign prior instead of a campaign of its own, and commits: prior's
// skipped rows become this file's, its source and keys this file's. The
// rows are counted once here, as Commit counts an import (moving rows to
// another campaign fires no trigger). Unlike SQLite, the campaign number
// the import took is not given back: another host may have taken the next.
func (im *importer) ContinueInto(ctx context.Context, prior campaign.Campaign) (campaign.Campaign, error) {
	if im.done {
		return prior, errors.New("import already finished")
	}
	err := im.flush(ctx)
	if err == nil {
		b := &pgx.Batch{}
		b.Queue(`UPDATE messages SET campaign_id = $1 WHERE campaign_id = $2`, prior.ID, im.c.ID)
		b.Queue(`DELETE FROM skipped WHERE campaign_id = $1`, prior.ID)
		b.Queue(`UPDATE skipped SET campaign_id = $1 WHERE campaign_id = $2`, prior.ID, im.c.ID)
		b.Queue(`UPDATE campaigns SET imported = imported + $1, skipped = $2, source = $3, source_key = $4, recipients_key = $5
			WHERE id = $6`, im.c.Imported, im.c.Skipped, im.c.Source, im.sourceKey, im.recipientsKey, prior.ID)
		b.Queue(`INSERT INTO message_counts (campaign_id, account_id, state, n) VALUES ($1, 0, 'pending', $2)
			ON CONFLICT (campaign_id, state, account_id) DO UPDATE SET n = message_counts.n + excluded.n`, prior.ID, im.c.Imported)
		b.Queue(`DELETE FROM campaigns WHERE id = $1`, im.c.ID)
		queueCostCounts(b, prior.ID, im.prefixes)
		err = send(ctx, im.tx, b)
	}
	if err == nil {
		prior, err = rowscan.Campaign(im.tx.QueryRow(ctx, `SELECT `+rowscan.CampaignCols+` FROM campaigns WHERE id = $1`, prior.ID))
	}
	if err == nil {
		err = im.tx.Commit(ctx)
	}
	im.done = true
	if err != nil {
		im.tx.Rollback(context.Background())
		return prior, fmt.Errorf("add the new rows to campaign %d: %w", prior.ID, err)
	}
	return prior, nil
}

// Commit makes the campaign and all its rows visible at once, and counts
// the rows once (the triggers count every later move).
func (im *importer) Commit(ctx context.Context) (campaign.Campaign, error) {
	if im.done {
		return im.c, errors.New("import already finished")
	}
	err := im.flush(ctx)
	if err == nil {
		_, err = im.tx.Exec(ctx, `UPDATE campaigns SET imported = $1, skipped = $2, source_key = $3, recipients_key = $4 WHERE id = $5`,
			im.c.Imported, im.c.Skipped, im.sourceKey, im.recipientsKey, im.c.ID)
	}
	if err == nil && im.c.Imported > 0 {
		_, err = im.tx.Exec(ctx, `INSERT INTO message_counts (campaign_id, account_id, state, n)
			VALUES ($1, 0, 'pending', $2) ON CONFLICT (campaign_id, state, account_id) DO UPDATE SET n = message_counts.n + excluded.n`,
			im.c.ID, im.c.Imported)
	}
	if err == nil && len(im.prefixes) > 0 {
		b := &pgx.Batch{}
		queueCostCounts(b, im.c.ID, im.prefixes)
		err = send(ctx, im.tx, b)
	}
	if err == nil {
		err = im.tx.Commit(ctx)
	}
	im.done = true
	if err != nil {
		im.tx.Rollback(context.Background())
		return im.c, fmt.Errorf("commit import: %w", err)
	}
	return im.c, nil
}

// Rollback discards the import; safe after Commit.
func (im *importer) Rollback() {
	if im.done {
		return
	}
	im.tx.Rollback(context.Background())
	im.done = true
}

// CampaignStopped is campaign.ErrPaused or campaign.ErrCancelled when the
// campaign was paused or cancelled, nil while it may send.
func (s *Store) CampaignStopped(ctx context.Context, id int64) error {
	var (
		state     string
		cancelled bool
	)
	err := s.pool.QueryRow(ctx, `SELECT state, cancelled_at IS NOT NULL FROM campaigns WHERE id = $1`, id).Scan(&state, &cancelled)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	case err != nil:
		return fmt.Errorf("read campaign %d: %w", id, err)
	case cancelled:
		return campaign.CampaignCancelled.Stopped()
	}
	return campaign.CampaignState(state).Stopped()
}

// queueCostCounts counts an import's rows, pending and so may cost, by
// number prefix (cost_counts), as the SQLite store's addCostCounts does.
func queueCostCounts(b *pgx.Batch, id int64, prefixes map[string]int64) {
	for p, n := range prefixes {
		b.Queue(`INSERT INTO cost_counts (campaign_id, prefix, n) VALUES ($1, $2, $3)
			ON CONFLICT (campaign_id, prefix) DO UPDATE SET n = cost_counts.n + excluded.n`, id, p, n)
	}
}
