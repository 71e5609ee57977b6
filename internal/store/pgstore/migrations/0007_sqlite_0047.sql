-- SQLite's 0047 (issue 28's rest): held sends, --ttl, --max-held and an
-- account's --api. A held row (the send's answer said
-- held_for_quality_assessment) counts in delivery_counts.held, not in
-- reported: no webhook said anything yet.
ALTER TABLE delivery_counts ADD COLUMN held BIGINT NOT NULL DEFAULT 0;

ALTER TABLE messages DROP CONSTRAINT IF EXISTS messages_delivery_check;
ALTER TABLE messages ADD CONSTRAINT messages_delivery_check
    CHECK (delivery IN ('held', 'sent', 'delivered', 'read', 'failed'));

ALTER TABLE campaigns ADD COLUMN max_held BIGINT NOT NULL DEFAULT 100;
ALTER TABLE campaigns ADD COLUMN ttl      BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts  ADD COLUMN api      TEXT    NOT NULL DEFAULT '';

CREATE OR REPLACE FUNCTION delivery_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE delivery_counts SET
        reported = reported - (OLD.delivery IS NOT NULL AND OLD.delivery IS DISTINCT FROM 'held')::int,
        delivered = delivered - (coalesce(OLD.delivery, '') IN ('delivered', 'read'))::int,
        held = held - (OLD.delivery IS NOT DISTINCT FROM 'held')::int,
        read = read - (OLD.delivery IS NOT DISTINCT FROM 'read')::int,
        failed_after_send = failed_after_send - OLD.failed_after_send
        WHERE campaign_id = OLD.campaign_id AND account_id = coalesce(OLD.account_id, 0);
    INSERT INTO delivery_counts (campaign_id, account_id, reported, delivered, read, failed_after_send, held)
        SELECT NEW.campaign_id, coalesce(NEW.account_id, 0),
            (NEW.delivery IS NOT NULL AND NEW.delivery IS DISTINCT FROM 'held')::int,
            (coalesce(NEW.delivery, '') IN ('delivered', 'read'))::int,
            (NEW.delivery IS NOT DISTINCT FROM 'read')::int, NEW.failed_after_send,
            (NEW.delivery IS NOT DISTINCT FROM 'held')::int
        WHERE NEW.delivery IS NOT NULL OR NEW.failed_after_send = 1
        ON CONFLICT (campaign_id, account_id) DO UPDATE SET
            reported = delivery_counts.reported + excluded.reported,
            delivered = delivery_counts.delivered + excluded.delivered,
            read = delivery_counts.read + excluded.read,
            failed_after_send = delivery_counts.failed_after_send + excluded.failed_after_send,
            held = delivery_counts.held + excluded.held;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION delivery_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE delivery_counts SET
        reported = reported - (OLD.delivery IS NOT NULL AND OLD.delivery IS DISTINCT FROM 'held')::int,
        delivered = delivered - (coalesce(OLD.delivery, '') IN ('delivered', 'read'))::int,
        held = held - (OLD.delivery IS NOT DISTINCT FROM 'held')::int,
        read = read - (OLD.delivery IS NOT DISTINCT FROM 'read')::int,
        failed_after_send = failed_after_send - OLD.failed_after_send
        WHERE campaign_id = OLD.campaign_id AND account_id = coalesce(OLD.account_id, 0);
    RETURN NULL;
END $$;
