-- SQLite's 0056: the budgets' spend (campaign_spend) of campaigns deleted
-- before deleting a campaign deleted it too (internal/store/managesql).
DELETE FROM campaign_spend WHERE campaign_id NOT IN (SELECT id FROM campaigns);
