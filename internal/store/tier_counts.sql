-- The triggers that keep migration 0046's tier_minutes, in the transaction
-- of the statement that writes an attempt, whichever code runs it (the
-- tally of the sending path included: its rows only ever say sent, which
-- these skip in their WHEN). The store runs this file, after filling the
-- table from scratch, whenever one of them is missing (ensureTierCounts).
--
-- A row's share: not_sent 1 for a claim put back without a request
-- (class not-sent), not_sent_sent 1 when that one also says sent; among
-- the others failed 1 for a permanent failure not sent, restricted 1 for
-- 131048 or 131064: what campaign.DaysOf tells apart beyond requests and
-- sent, which attempt_rollup keeps.

DROP TRIGGER IF EXISTS tier_minutes_insert;
DROP TRIGGER IF EXISTS tier_minutes_update;
DROP TRIGGER IF EXISTS tier_minutes_delete;
DROP TRIGGER IF EXISTS tier_minutes_campaign_gone;

CREATE TRIGGER tier_minutes_insert AFTER INSERT ON attempts
    WHEN NEW.class IS 'not-sent' OR NEW.class IS 'permanent' OR coalesce(NEW.error_code, 0) IN (131048, 131064) BEGIN
    INSERT INTO tier_minutes (campaign_id, account_id, minute, not_sent, not_sent_sent, failed, restricted)
        VALUES ((SELECT campaign_id FROM messages WHERE id = NEW.message_id), NEW.account_id,
            NEW.claimed_at / 60000000000, NEW.class IS 'not-sent', NEW.class IS 'not-sent' AND NEW.outcome IS 'sent',
            NEW.class IS 'permanent' AND NEW.outcome IS NOT 'sent',
            NEW.class IS NOT 'not-sent' AND coalesce(NEW.error_code, 0) IN (131048, 131064))
        ON CONFLICT DO UPDATE SET not_sent = not_sent + excluded.not_sent,
            not_sent_sent = not_sent_sent + excluded.not_sent_sent, failed = failed + excluded.failed,
            restricted = restricted + excluded.restricted;
END;

-- The old share leaves the old row's minute, the new one joins its own:
-- right even if a request ever moved to another account or minute.
CREATE TRIGGER tier_minutes_update AFTER UPDATE OF outcome, class, error_code, account_id, claimed_at, message_id ON attempts
    WHEN OLD.class IS 'not-sent' OR OLD.class IS 'permanent' OR coalesce(OLD.error_code, 0) IN (131048, 131064)
        OR NEW.class IS 'not-sent' OR NEW.class IS 'permanent' OR coalesce(NEW.error_code, 0) IN (131048, 131064) BEGIN
    UPDATE tier_minutes SET not_sent = not_sent - (OLD.class IS 'not-sent'),
        not_sent_sent = not_sent_sent - (OLD.class IS 'not-sent' AND OLD.outcome IS 'sent'),
        failed = failed - (OLD.class IS 'permanent' AND OLD.outcome IS NOT 'sent'),
        restricted = restricted - (OLD.class IS NOT 'not-sent' AND coalesce(OLD.error_code, 0) IN (131048, 131064))
        WHERE campaign_id = (SELECT campaign_id FROM messages WHERE id = OLD.message_id)
            AND account_id = OLD.account_id AND minute = OLD.claimed_at / 60000000000;
    INSERT INTO tier_minutes (campaign_id, account_id, minute, not_sent, not_sent_sent, failed, restricted)
        VALUES ((SELECT campaign_id FROM messages WHERE id = NEW.message_id), NEW.account_id,
            NEW.claimed_at / 60000000000, NEW.class IS 'not-sent', NEW.class IS 'not-sent' AND NEW.outcome IS 'sent',
            NEW.class IS 'permanent' AND NEW.outcome IS NOT 'sent',
            NEW.class IS NOT 'not-sent' AND coalesce(NEW.error_code, 0) IN (131048, 131064))
        ON CONFLICT DO UPDATE SET not_sent = not_sent + excluded.not_sent,
            not_sent_sent = not_sent_sent + excluded.not_sent_sent, failed = failed + excluded.failed,
            restricted = restricted + excluded.restricted;
END;

-- Attempts go only with their campaign (its messages cascade): when the
-- message is already gone the campaign's rows go below.
CREATE TRIGGER tier_minutes_delete AFTER DELETE ON attempts
    WHEN OLD.class IS 'not-sent' OR OLD.class IS 'permanent' OR coalesce(OLD.error_code, 0) IN (131048, 131064) BEGIN
    UPDATE tier_minutes SET not_sent = not_sent - (OLD.class IS 'not-sent'),
        not_sent_sent = not_sent_sent - (OLD.class IS 'not-sent' AND OLD.outcome IS 'sent'),
        failed = failed - (OLD.class IS 'permanent' AND OLD.outcome IS NOT 'sent'),
        restricted = restricted - (OLD.class IS NOT 'not-sent' AND coalesce(OLD.error_code, 0) IN (131048, 131064))
        WHERE campaign_id = (SELECT campaign_id FROM messages WHERE id = OLD.message_id)
            AND account_id = OLD.account_id AND minute = OLD.claimed_at / 60000000000;
END;

CREATE TRIGGER tier_minutes_campaign_gone AFTER DELETE ON campaigns BEGIN
    DELETE FROM tier_minutes WHERE campaign_id = OLD.id;
END;
