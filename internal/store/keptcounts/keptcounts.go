// Package keptcounts is the counts the triggers keep as rows move
// (migrations 0009, 0010, 0046) and the query that recomputes each from
// scratch, written once: the SQLite store fills a count from its recount
// when its triggers are missing, storetest.CheckCounts holds what is kept
// equal to the recount after every move a test makes, and pgstore's tests
// run the same queries on Postgres to hold its counts to SQLite's.
package keptcounts

import (
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/statesql"
)

// Table is a table of counts the triggers keep as rows move (Cols), the
// query that reads what is kept, and the query that computes it from
// scratch. Rows kept at zero (a state every message has left) are the
// same as rows absent.
type Table struct{ Name, Cols, Kept, Recount string }

// All are every kept count: store.Open fills each from its Recount when
// its triggers are missing, and storetest.CheckCounts holds Kept equal to
// Recount after every move a test makes, on either driver.
var All = []Table{
	{
		Name: "message_counts",
		Cols: "campaign_id, account_id, state, n",
		Kept: `SELECT campaign_id, account_id, state, n FROM message_counts WHERE n <> 0`,
		Recount: `SELECT campaign_id, coalesce(account_id, 0), state, count(*) FROM messages
			GROUP BY 1, 2, 3`,
	},
	{
		Name: "attempt_rollup",
		Cols: "campaign_id, account_id, minute, attempts, throttled, sent, first_at, last_at, done_at",
		Kept: `SELECT campaign_id, account_id, minute, attempts, throttled, sent, first_at, last_at, done_at
			FROM attempt_rollup WHERE attempts <> 0`,
		Recount: `SELECT m.campaign_id, t.account_id, t.claimed_at / 60000000000, count(*),
			count(CASE WHEN t.class IN ('throttled', 'pair-throttled') THEN 1 END),
			count(CASE WHEN t.outcome = 'sent' THEN 1 END),
			min(t.claimed_at), max(t.claimed_at), max(coalesce(t.done_at, t.claimed_at))
			FROM attempts t JOIN messages m ON m.id = t.message_id GROUP BY 1, 2, 3`,
	},
	{
		Name: "attempt_firsts",
		Cols: "campaign_id, account_id, minute, prev_any, prev_account, n",
		Kept: `SELECT campaign_id, account_id, minute, prev_any, prev_account, n FROM attempt_firsts WHERE n <> 0`,
		Recount: `SELECT campaign_id, account_id, minute, prev_any, prev_account, count(*) FROM (
			SELECT m.campaign_id, t.account_id, t.claimed_at / 60000000000 AS minute,
				coalesce(lag(t.claimed_at) OVER (PARTITION BY t.message_id ORDER BY t.id) / 60000000000, -1) AS prev_any,
				coalesce(lag(t.claimed_at) OVER (PARTITION BY t.message_id, t.account_id ORDER BY t.id) / 60000000000, -1) AS prev_account
			FROM attempts t JOIN messages m ON m.id = t.message_id) AS firsts
			GROUP BY 1, 2, 3, 4, 5`,
	},
	{
		Name: "tier_minutes",
		Cols: "campaign_id, account_id, minute, not_sent, not_sent_sent, failed, restricted",
		Kept: `SELECT campaign_id, account_id, minute, not_sent, not_sent_sent, failed, restricted FROM tier_minutes
			WHERE not_sent <> 0 OR not_sent_sent <> 0 OR failed <> 0 OR restricted <> 0`,
		Recount: TierRecount,
	},
	{
		Name: "delivery_counts",
		Cols: "campaign_id, account_id, reported, delivered, read, failed_after_send, held",
		Kept: `SELECT campaign_id, account_id, reported, delivered, read, failed_after_send, held FROM delivery_counts
			WHERE reported <> 0 OR delivered <> 0 OR read <> 0 OR failed_after_send <> 0 OR held <> 0`,
		Recount: `SELECT campaign_id, coalesce(account_id, 0), count(CASE WHEN NOT ` + statesql.DeliveryIs("delivery", campaign.DeliveryHeld) + ` THEN delivery END),
			count(CASE WHEN ` + statesql.Received("delivery") + ` THEN 1 END), count(CASE WHEN ` + statesql.DeliveryIs("delivery", campaign.DeliveryRead) + ` THEN 1 END),
			count(CASE WHEN failed_after_send = 1 THEN 1 END), count(CASE WHEN ` + statesql.DeliveryIs("delivery", campaign.DeliveryHeld) + ` THEN 1 END)
			FROM messages WHERE delivery IS NOT NULL OR failed_after_send = 1 GROUP BY 1, 2`,
	},
	{
		Name:    "cost_counts",
		Cols:    "campaign_id, prefix, n",
		Kept:    `SELECT campaign_id, prefix, n FROM cost_counts WHERE n <> 0`,
		Recount: `SELECT campaign_id, substr(phone, 1, 5), count(*) FROM messages WHERE state IN ('pending', 'sending', 'sent', 'unknown') GROUP BY 1, 2`,
	},
	{
		Name:    "message_charges",
		Cols:    "message_id, " + chargeKey,
		Kept:    `SELECT message_id, ` + chargeKey + ` FROM message_charges`,
		Recount: `SELECT message_id, ` + chargeKey + ` FROM message_charge_now`,
	},
	{
		Name:    "charge_counts",
		Cols:    chargeKey + ", n",
		Kept:    `SELECT ` + chargeKey + `, n FROM charge_counts WHERE n <> 0`,
		Recount: `SELECT ` + chargeKey + `, count(*) FROM message_charge_now GROUP BY 1, 2, 3, 4, 5, 6`,
	},
}

// chargeKey is what charge_counts counts messages by.
const chargeKey = "campaign_id, prefix, day, category, pricing_type, billable"

// TierRecount computes migration 0046's tier_minutes from the attempts,
// without the rows all zero (CheckCounts takes those as absent); Postgres runs it too.
const TierRecount = `SELECT m.campaign_id, t.account_id, t.claimed_at / 60000000000,
	count(CASE WHEN coalesce(t.class, '') = 'not-sent' THEN 1 END),
	count(CASE WHEN coalesce(t.class, '') = 'not-sent' AND coalesce(t.outcome, '') = 'sent' THEN 1 END),
	count(CASE WHEN coalesce(t.class, '') = 'permanent' AND coalesce(t.outcome, '') <> 'sent' THEN 1 END),
	count(CASE WHEN coalesce(t.class, '') <> 'not-sent' AND coalesce(t.error_code, 0) IN (131048, 131064) THEN 1 END)
	FROM attempts t JOIN messages m ON m.id = t.message_id
	WHERE t.class IN ('not-sent', 'permanent') OR coalesce(t.error_code, 0) IN (131048, 131064)
	GROUP BY 1, 2, 3
	HAVING count(CASE WHEN coalesce(t.class, '') = 'not-sent' OR (coalesce(t.class, '') = 'permanent' AND coalesce(t.outcome, '') <> 'sent')
		OR coalesce(t.error_code, 0) IN (131048, 131064) THEN 1 END) > 0`
