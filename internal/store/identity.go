package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// A campaign's identity is its message and its recipients (issue 10): the
// runner decides, inside the import's transaction, whether a file starts a
// campaign, continues one or repeats a finished one. These are the store's
// parts of that decision (the lookup by source key is a read model:
// readmodel.CampaignBySource); the rule itself is in internal/runner.

// SameMessage returns the campaigns, newest first, that send the same
// message as the one being imported. It reads inside the import's
// transaction, which holds the write lock: no other process can create one
// meanwhile.
func (im *importer) SameMessage(ctx context.Context) ([]driver.Sibling, error) {
	rows, err := im.tx.QueryContext(ctx, `SELECT `+rowscan.CampaignCols+`, recipients_key FROM campaigns
		WHERE id != ? AND kind = ? AND template = ? AND lang = ? AND text = ? ORDER BY id DESC`,
		im.c.ID, string(im.c.Spec.Kind), im.c.Spec.Template, im.c.Spec.Lang, im.c.Spec.Text)
	if err != nil {
		return nil, fmt.Errorf("find campaigns with the same message: %w", err)
	}
	defer rows.Close()
	var out []driver.Sibling
	for rows.Next() {
		var sb driver.Sibling
		if sb.Campaign, err = rowscan.Campaign(rows, &sb.RecipientsKey); err != nil {
			return nil, err
		}
		if sb.Campaign.Spec.SameMessage(im.c.Spec) {
			out = append(out, sb)
		}
	}
	return out, rows.Err()
}

// EachNumber calls fn with every number of campaign id, inside the
// import's transaction.
func (im *importer) EachNumber(ctx context.Context, id int64, fn func(phone string)) error {
	rows, err := im.tx.QueryContext(ctx, `SELECT phone FROM messages WHERE campaign_id = ?`, id)
	if err != nil {
		return fmt.Errorf("read the numbers of campaign %d: %w", id, err)
	}
	defer rows.Close()
	var phone string
	for rows.Next() {
		if err := rows.Scan(&phone); err != nil {
			return fmt.Errorf("read the numbers of campaign %d: %w", id, err)
		}
		fn(phone)
	}
	return rows.Err()
}

// SetKeys sets the keys Commit stores: the source key (file bytes, message
// and read flags) and the recipients key.
func (im *importer) SetKeys(source, recipients string) {
	im.sourceKey, im.recipientsKey = source, recipients
}

// ContinueInto ends the import by adding its rows to the unfinished
// campaign prior instead of a campaign of their own, and commits. The
// rows given to AddBatch must be those not already in prior. prior's
// skipped rows become this file's; its source and keys this file's.
func (im *importer) ContinueInto(ctx context.Context, prior campaign.Campaign) (campaign.Campaign, error) {
	if im.done {
		return prior, errors.New("import already finished")
	}
	err := im.flush(ctx)
	stmts := []struct {
		q    string
		args []any
	}{
		{`UPDATE messages SET campaign_id = ? WHERE campaign_id = ?`, []any{prior.ID, im.c.ID}},
		{`DELETE FROM skipped WHERE campaign_id = ?`, []any{prior.ID}},
		{`UPDATE skipped SET campaign_id = ? WHERE campaign_id = ?`, []any{prior.ID, im.c.ID}},
		{`UPDATE campaigns SET imported = imported + ?, skipped = ?, source = ?, source_key = ?, recipients_key = ?
			WHERE id = ?`, []any{im.c.Imported, im.c.Skipped, im.c.Source, im.sourceKey, im.recipientsKey, prior.ID}},
		// Counted once here, as Commit counts an import (migration 0010):
		// moving rows fires no trigger.
		{`INSERT INTO message_counts (campaign_id, account_id, state, n) VALUES (?, 0, 'pending', ?)
			ON CONFLICT DO UPDATE SET n = n + excluded.n`, []any{prior.ID, im.c.Imported}},
		{`DELETE FROM campaigns WHERE id = ?`, []any{im.c.ID}},
		// The number the import took is given back: the next campaign
		// gets it, as if this import had never made one.
		{`UPDATE sqlite_sequence SET seq = ? WHERE name = 'campaigns' AND seq = ?`, []any{im.c.ID - 1, im.c.ID}},
	}
	for _, st := range stmts {
		if err != nil {
			break
		}
		_, err = im.tx.ExecContext(ctx, st.q, st.args...)
	}
	if err == nil {
		err = addCostCounts(ctx, im.tx, prior.ID, im.prefixes)
	}
	if err == nil {
		prior, err = rowscan.Campaign(im.tx.QueryRowContext(ctx, `SELECT `+rowscan.CampaignCols+` FROM campaigns WHERE id = ?`, prior.ID))
	}
	if err == nil {
		err = im.tx.Commit()
	}
	im.finish()
	if err != nil {
		im.tx.Rollback()
		return prior, fmt.Errorf("add the new rows to campaign %d: %w", prior.ID, im.s.storageError(err))
	}
	return prior, nil
}
