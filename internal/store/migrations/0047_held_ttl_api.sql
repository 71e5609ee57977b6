-- Issue 28's rest: held sends, --ttl, --max-held and an account's --api.
--
-- delivery_counts.held counts the rows whose delivery is 'held' (the send's
-- answer said held_for_quality_assessment; no webhook says held, so held
-- rows are not "reported"). Its trigger is dropped here: the store finds it
-- missing on open, fills every kept count from scratch and creates the
-- triggers of counts.sql again, which keep held.
ALTER TABLE delivery_counts ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
DROP TRIGGER IF EXISTS delivery_counts_update;

-- messages.delivery admits 'held', widened in place as 0014 widened
-- messages.state (the stored rows are valid either way).
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
    SET sql = replace(sql, 'delivery IN (''sent'', ''delivered'', ''read'', ''failed'')',
        'delivery IN (''held'', ''sent'', ''delivered'', ''read'', ''failed'')')
    WHERE type = 'table' AND name = 'messages';
PRAGMA writable_schema = OFF;

-- max_held: the run's --max-held (campaign.DefaultMaxHeld unless given; 0
-- never stops). ttl: --ttl in seconds (0: the template's own), kept so a
-- resumed run checks and sends the same.
ALTER TABLE campaigns ADD COLUMN max_held INTEGER NOT NULL DEFAULT 100;
ALTER TABLE campaigns ADD COLUMN ttl      INTEGER NOT NULL DEFAULT 0;

-- api: the account's default endpoint when a run gives no --api ('' is
-- cloud): cloud, marketing or auto (campaign.API).
ALTER TABLE accounts ADD COLUMN api TEXT NOT NULL DEFAULT '';
