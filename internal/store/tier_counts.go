package store

import (
	"context"
	_ "embed"

	"github.com/wasend/wasend/internal/store/keptcounts"
)

//go:embed tier_counts.sql
var tierTriggersSQL string

// tierTriggerNames are the triggers tier_counts.sql creates.
var tierTriggerNames = []string{"tier_minutes_add", "tier_minutes_insert", "tier_minutes_update", "tier_minutes_delete",
	"tier_minutes_campaign_gone"}

// ensureTierCounts fills tier_minutes from the attempts and creates the
// triggers that keep it when any is missing: after migration 0046, or one
// that rebuilt attempts.
func ensureTierCounts(ctx context.Context, s *Store) error {
	return ensureTriggers(ctx, s, tierTriggerNames, "keep warm-up's requests by minute", "DELETE FROM tier_minutes;\n"+
		"INSERT INTO tier_minutes (campaign_id, account_id, minute, not_sent, not_sent_sent, failed, restricted) "+
		keptcounts.TierRecount+";\n"+tierTriggersSQL)
}
