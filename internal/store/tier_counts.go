package store

import (
	"context"
	_ "embed"
)

//go:embed tier_counts.sql
var tierTriggersSQL string

// tierTriggerNames are the triggers tier_counts.sql creates.
var tierTriggerNames = []string{"tier_minutes_insert", "tier_minutes_update", "tier_minutes_delete",
	"tier_minutes_campaign_gone"}

// tierRecount computes migration 0046's tier_minutes from the attempts,
// without the rows all zero (CheckCounts takes those as absent); Postgres runs it too.
const tierRecount = `SELECT m.campaign_id, t.account_id, t.claimed_at / 60000000000,
	count(CASE WHEN coalesce(t.class, '') = 'not-sent' THEN 1 END),
	count(CASE WHEN coalesce(t.class, '') = 'not-sent' AND coalesce(t.outcome, '') = 'sent' THEN 1 END),
	count(CASE WHEN coalesce(t.class, '') = 'permanent' AND coalesce(t.outcome, '') <> 'sent' THEN 1 END),
	count(CASE WHEN coalesce(t.class, '') <> 'not-sent' AND coalesce(t.error_code, 0) IN (131048, 131064) THEN 1 END)
	FROM attempts t JOIN messages m ON m.id = t.message_id
	WHERE t.class IN ('not-sent', 'permanent') OR coalesce(t.error_code, 0) IN (131048, 131064)
	GROUP BY 1, 2, 3
	HAVING count(CASE WHEN coalesce(t.class, '') = 'not-sent' OR (coalesce(t.class, '') = 'permanent' AND coalesce(t.outcome, '') <> 'sent')
		OR coalesce(t.error_code, 0) IN (131048, 131064) THEN 1 END) > 0`

// ensureTierCounts fills tier_minutes from the attempts and creates the
// triggers that keep it when any is missing: after migration 0046, or one
// that rebuilt attempts.
func ensureTierCounts(ctx context.Context, s *Store) error {
	return ensureTriggers(ctx, s, tierTriggerNames, "keep warm-up's requests by minute", "DELETE FROM tier_minutes;\n"+
		"INSERT INTO tier_minutes (campaign_id, account_id, minute, not_sent, not_sent_sent, failed, restricted) "+
		tierRecount+";\n"+tierTriggersSQL)
}
