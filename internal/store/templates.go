package store

import (
	"context"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
)

// ReplaceTemplates stores a WABA's templates as just read, in place of
// those read before from it: a template deleted at Meta goes here too.
func (s *Store) ReplaceTemplates(ctx context.Context, waba string, ts []campaign.Template) error {
	return s.write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM templates WHERE waba_id = ?`, waba); err != nil {
			return fmt.Errorf("replace the templates of WABA %s: %w", waba, err)
		}
		now := s.now()
		for _, t := range ts {
			at := t.SyncedAt
			if at.IsZero() {
				at = now
			}
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO templates
				(waba_id, name, language, status, category, parameter_format, components, synced_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				waba, t.Name, t.Language, t.Status, t.Category, t.ParameterFormat, t.Components, at.UnixNano()); err != nil {
				return fmt.Errorf("store template %s (%s): %w", t.Name, t.Language, err)
			}
		}
		return nil
	})
}
