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
DROP VIEW IF EXISTS tier_minutes_share;

-- SQLite's function, as Postgres's tier_minutes_share: an attempt's share
-- written here (sign 1: it joins its minute, -1: it leaves) is added to
-- its minute, the one place the share is spelled. The view holds no row.
-- A share whose message is gone is left to tier_minutes_campaign_gone.
CREATE VIEW tier_minutes_share (message_id, account_id, claimed_at, class, outcome, error_code, sign) AS
    SELECT 0, 0, 0, '', '', 0, 0 WHERE 0;
CREATE TRIGGER tier_minutes_add INSTEAD OF INSERT ON tier_minutes_share BEGIN
    INSERT INTO tier_minutes (campaign_id, account_id, minute, not_sent, not_sent_sent, failed, restricted)
        SELECT m.campaign_id, NEW.account_id, NEW.claimed_at / 60000000000,
            NEW.sign * (NEW.class IS 'not-sent'), NEW.sign * (NEW.class IS 'not-sent' AND NEW.outcome IS 'sent'),
            NEW.sign * (NEW.class IS 'permanent' AND NEW.outcome IS NOT 'sent'),
            NEW.sign * (NEW.class IS NOT 'not-sent' AND coalesce(NEW.error_code, 0) IN (131048, 131064))
        FROM messages AS m WHERE m.id = NEW.message_id
        ON CONFLICT DO UPDATE SET not_sent = not_sent + excluded.not_sent,
            not_sent_sent = not_sent_sent + excluded.not_sent_sent, failed = failed + excluded.failed,
            restricted = restricted + excluded.restricted;
END;

CREATE TRIGGER tier_minutes_insert AFTER INSERT ON attempts
    WHEN NEW.class IS 'not-sent' OR NEW.class IS 'permanent' OR coalesce(NEW.error_code, 0) IN (131048, 131064) BEGIN
    INSERT INTO tier_minutes_share VALUES (NEW.message_id, NEW.account_id, NEW.claimed_at, NEW.class, NEW.outcome, NEW.error_code, 1);
END;

-- The old share leaves the old row's minute, the new one joins its own:
-- right even if a request ever moved to another account or minute.
CREATE TRIGGER tier_minutes_update AFTER UPDATE OF outcome, class, error_code, account_id, claimed_at, message_id ON attempts
    WHEN OLD.class IS 'not-sent' OR OLD.class IS 'permanent' OR coalesce(OLD.error_code, 0) IN (131048, 131064)
        OR NEW.class IS 'not-sent' OR NEW.class IS 'permanent' OR coalesce(NEW.error_code, 0) IN (131048, 131064) BEGIN
    INSERT INTO tier_minutes_share VALUES (OLD.message_id, OLD.account_id, OLD.claimed_at, OLD.class, OLD.outcome, OLD.error_code, -1);
    INSERT INTO tier_minutes_share VALUES (NEW.message_id, NEW.account_id, NEW.claimed_at, NEW.class, NEW.outcome, NEW.error_code, 1);
END;

-- Attempts go only with their campaign (its messages cascade): when the
-- message is already gone the campaign's rows go below.
CREATE TRIGGER tier_minutes_delete AFTER DELETE ON attempts
    WHEN OLD.class IS 'not-sent' OR OLD.class IS 'permanent' OR coalesce(OLD.error_code, 0) IN (131048, 131064) BEGIN
    INSERT INTO tier_minutes_share VALUES (OLD.message_id, OLD.account_id, OLD.claimed_at, OLD.class, OLD.outcome, OLD.error_code, -1);
END;

CREATE TRIGGER tier_minutes_campaign_gone AFTER DELETE ON campaigns BEGIN
    DELETE FROM tier_minutes WHERE campaign_id = OLD.id;
END;
