-- A deleted campaign left its budget's spend (campaign_spend) behind:
-- deleting a campaign deletes it now (internal/store/managesql); this
-- removes what earlier deletes left.
DELETE FROM campaign_spend WHERE campaign_id NOT IN (SELECT id FROM campaigns);
