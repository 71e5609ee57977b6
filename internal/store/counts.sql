-- The triggers that keep migration 0010's counts, in the transaction of
-- the statement that moves a row, whichever code runs it. The store runs
-- this file, after filling the tables from scratch, in one transaction
-- whenever one of these triggers is missing (see ensureCounts).
--
-- A statement that changes a row's tally (migration 0024) keeps that row's
-- counts itself: the sending path's claims and plain sent outcomes
-- (internal/store/tally.go), a few statements per transaction instead of
-- these per row.
--
-- Messages are inserted by the import alone, which adds its count in one
-- statement before it commits (Importer.Commit): a trigger per row would
-- cost a million upserts on a million-row import. Messages and attempts
-- are only deleted with their campaign, which deletes its counts.
--
-- The file is a text/template (statesql.Template): its actions fill in the
-- delivery ladder's guards and the blocks written once (defined below).

DROP TRIGGER IF EXISTS message_counts_update;
DROP TRIGGER IF EXISTS message_counts_delete;
DROP TRIGGER IF EXISTS attempt_rollup_insert;
DROP TRIGGER IF EXISTS attempt_rollup_update;
DROP TRIGGER IF EXISTS campaign_counts_delete;
DROP TRIGGER IF EXISTS delivery_counts_update;
DROP TRIGGER IF EXISTS delivery_counts_delete;
DROP TRIGGER IF EXISTS cost_counts_update;
DROP TRIGGER IF EXISTS cost_counts_delete;
DROP TRIGGER IF EXISTS cost_counts_campaign_gone;
DROP TRIGGER IF EXISTS charge_counts_insert;
DROP TRIGGER IF EXISTS charge_counts_update;

CREATE TRIGGER message_counts_update AFTER UPDATE OF state, account_id ON messages
    WHEN OLD.tally IS NEW.tally AND (OLD.state IS NOT NEW.state OR OLD.account_id IS NOT NEW.account_id) BEGIN
    UPDATE message_counts SET n = n - 1
        WHERE campaign_id = OLD.campaign_id AND state = OLD.state AND account_id = coalesce(OLD.account_id, 0);
    INSERT INTO message_counts (campaign_id, account_id, state, n)
        VALUES (NEW.campaign_id, coalesce(NEW.account_id, 0), NEW.state, 1)
        ON CONFLICT DO UPDATE SET n = n + 1;
END;

-- A decrement never creates a row: when a campaign is deleted its counts go
-- first or its messages do, and either order leaves nothing behind.
CREATE TRIGGER message_counts_delete AFTER DELETE ON messages BEGIN
    UPDATE message_counts SET n = n - 1
        WHERE campaign_id = OLD.campaign_id AND state = OLD.state AND account_id = coalesce(OLD.account_id, 0);
END;

CREATE TRIGGER attempt_rollup_insert AFTER INSERT ON attempts WHEN NEW.tally = 0 BEGIN
    INSERT INTO attempt_rollup (campaign_id, account_id, minute, attempts, throttled, sent, first_at, last_at, done_at)
        VALUES ((SELECT campaign_id FROM messages WHERE id = NEW.message_id), NEW.account_id,
            NEW.claimed_at / 60000000000, 1,
            NEW.class IS NOT NULL AND NEW.class IN ('throttled', 'pair-throttled'), NEW.outcome IS 'sent',
            NEW.claimed_at, NEW.claimed_at, coalesce(NEW.done_at, NEW.claimed_at))
        ON CONFLICT DO UPDATE SET attempts = attempts + 1, throttled = throttled + excluded.throttled,
            sent = sent + excluded.sent, first_at = min(first_at, excluded.first_at),
            last_at = max(last_at, excluded.last_at), done_at = max(done_at, excluded.done_at);
    INSERT INTO attempt_firsts (campaign_id, account_id, minute, prev_any, prev_account, n)
        VALUES ((SELECT campaign_id FROM messages WHERE id = NEW.message_id), NEW.account_id,
            NEW.claimed_at / 60000000000,
            coalesce((SELECT claimed_at FROM attempts WHERE message_id = NEW.message_id AND id < NEW.id
                ORDER BY id DESC LIMIT 1) / 60000000000, -1),
            coalesce((SELECT claimed_at FROM attempts WHERE message_id = NEW.message_id AND account_id = NEW.account_id
                AND id < NEW.id ORDER BY id DESC LIMIT 1) / 60000000000, -1),
            1)
        ON CONFLICT DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER attempt_rollup_update AFTER UPDATE OF outcome, class, done_at ON attempts
    WHEN OLD.tally IS NEW.tally BEGIN
    UPDATE attempt_rollup SET
        throttled = throttled + (NEW.class IS NOT NULL AND NEW.class IN ('throttled', 'pair-throttled'))
            - (OLD.class IS NOT NULL AND OLD.class IN ('throttled', 'pair-throttled')),
        sent = sent + (NEW.outcome IS 'sent') - (OLD.outcome IS 'sent'),
        done_at = max(done_at, coalesce(NEW.done_at, NEW.claimed_at))
        WHERE campaign_id = (SELECT campaign_id FROM messages WHERE id = NEW.message_id)
            AND account_id = NEW.account_id AND minute = NEW.claimed_at / 60000000000;
END;

CREATE TRIGGER campaign_counts_delete AFTER DELETE ON campaigns BEGIN
    DELETE FROM message_counts WHERE campaign_id = OLD.id;
    DELETE FROM attempt_rollup WHERE campaign_id = OLD.id;
    DELETE FROM attempt_firsts WHERE campaign_id = OLD.id;
    DELETE FROM delivery_counts WHERE campaign_id = OLD.id;
END;

-- delivery_counts (migration 0009): what status webhooks said. The ladder's
-- guards (received, read, held) come from campaign.DeliveryLadder.
CREATE TRIGGER delivery_counts_update AFTER UPDATE OF delivery, failed_after_send, account_id ON messages
    WHEN OLD.delivery IS NOT NEW.delivery OR OLD.failed_after_send IS NOT NEW.failed_after_send
        OR (OLD.account_id IS NOT NEW.account_id AND (OLD.delivery IS NOT NULL OR OLD.failed_after_send = 1)) BEGIN
    UPDATE delivery_counts SET reported = reported - (OLD.delivery IS NOT NULL AND OLD.delivery IS NOT {{held}}),
        delivered = delivered - ({{received "OLD.delivery"}}), held = held - (OLD.delivery IS {{held}}),
        read = read - (OLD.delivery IS {{read}}), failed_after_send = failed_after_send - OLD.failed_after_send
        WHERE campaign_id = OLD.campaign_id AND account_id = coalesce(OLD.account_id, 0);
    INSERT INTO delivery_counts (campaign_id, account_id, reported, delivered, read, failed_after_send, held)
        SELECT NEW.campaign_id, coalesce(NEW.account_id, 0), NEW.delivery IS NOT NULL AND NEW.delivery IS NOT {{held}},
            {{received "NEW.delivery"}}, NEW.delivery IS {{read}}, NEW.failed_after_send, NEW.delivery IS {{held}}
        WHERE NEW.delivery IS NOT NULL OR NEW.failed_after_send = 1
        ON CONFLICT DO UPDATE SET reported = reported + excluded.reported, delivered = delivered + excluded.delivered,
            read = read + excluded.read, failed_after_send = failed_after_send + excluded.failed_after_send,
            held = held + excluded.held;
END;

CREATE TRIGGER delivery_counts_delete AFTER DELETE ON messages
    WHEN OLD.delivery IS NOT NULL OR OLD.failed_after_send = 1 BEGIN
    UPDATE delivery_counts SET reported = reported - (OLD.delivery IS NOT NULL AND OLD.delivery IS NOT {{held}}),
        delivered = delivered - ({{received "OLD.delivery"}}), held = held - (OLD.delivery IS {{held}}),
        read = read - (OLD.delivery IS {{read}}), failed_after_send = failed_after_send - OLD.failed_after_send
        WHERE campaign_id = OLD.campaign_id AND account_id = coalesce(OLD.account_id, 0);
END;

-- cost_counts (migration 0050): the rows that may still cost (pending,
-- sending, sent or unknown), by number prefix. The import counts its rows;
-- only a move into or out of failed or expired changes the count, so the
-- claim's and the sender's moves pass these triggers by.
--
-- No trigger here tests a column against a list of more than two
-- constants: SQLite builds a temporary index for such a list, and in a
-- trigger it builds it again at every row it fires for, claims and sent
-- outcomes included (~8 µs each, two a message: migration 0059).
CREATE TRIGGER cost_counts_update AFTER UPDATE OF state ON messages
    WHEN (OLD.state NOT IN ('failed', 'expired')) IS NOT (NEW.state NOT IN ('failed', 'expired')) BEGIN
    INSERT INTO cost_counts (campaign_id, prefix, n)
        VALUES (NEW.campaign_id, substr(NEW.phone, 1, 5), CASE WHEN NEW.state NOT IN ('failed', 'expired') THEN 1 ELSE -1 END)
        ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER cost_counts_delete AFTER DELETE ON messages
    WHEN OLD.state NOT IN ('failed', 'expired') BEGIN
    UPDATE cost_counts SET n = n - 1 WHERE campaign_id = OLD.campaign_id AND prefix = substr(OLD.phone, 1, 5);
END;

CREATE TRIGGER cost_counts_campaign_gone AFTER DELETE ON campaigns BEGIN
    DELETE FROM cost_counts WHERE campaign_id = OLD.id;
    DELETE FROM charge_counts WHERE campaign_id = OLD.id;
END;

-- message_charges and charge_counts (migration 0050): a message's charge
-- follows from all its statuses (the first delivered or read, the latest
-- with pricing), so a status that comes or is matched to a row (or
-- relinked: the row it left too) replaces the message's charge with what
-- its statuses say now (the view message_charge_now) and moves
-- charge_counts by the difference. Statuses go only with their message,
-- and messages with their campaign, which takes its counts.
--
-- A message has one charge at most (message_charges' key), so the old one
-- is matched with = (SELECT …): IN (SELECT …) built a temporary index at
-- every status, 85 % of the webhook receiver's CPU (migration 0051).
--
-- The insert's trigger skips a status that cannot change the charge (most
-- of what Meta posts): one without pricing whose instant falls on or after
-- the day the message's charge already has, and one not delivered or read
-- before any delivered or read status (no charge before, none after).
CREATE TRIGGER charge_counts_insert AFTER INSERT ON message_statuses
    WHEN NEW.message_id IS NOT NULL AND CASE
        WHEN {{received "NEW.status"}} THEN NEW.pricing <> '' OR NOT EXISTS (SELECT 1 FROM message_charges
            WHERE message_id = NEW.message_id AND day <= NEW.at / 86400000000000)
        ELSE NEW.pricing <> '' AND EXISTS (SELECT 1 FROM message_charges WHERE message_id = NEW.message_id) END BEGIN
{{template "recharge" "NEW.message_id"}}
END;

CREATE TRIGGER charge_counts_update AFTER UPDATE OF message_id ON message_statuses
    WHEN OLD.message_id IS NOT NEW.message_id AND ({{received "NEW.status"}} OR NEW.pricing <> '') BEGIN
{{template "recharge" "OLD.message_id"}}
{{template "recharge" "NEW.message_id"}}
END;

-- recharge, given a message's id, replaces its row of message_charges with
-- what its statuses say now and moves charge_counts by the difference
-- (pgstore's twin is the function charge_counts_recharge).
{{define "recharge"}}    UPDATE charge_counts SET n = n - 1 WHERE (campaign_id, prefix, day, category, pricing_type, billable)
        = (SELECT campaign_id, prefix, day, category, pricing_type, billable FROM message_charges WHERE message_id = {{.}});
    DELETE FROM message_charges WHERE message_id = {{.}};
    INSERT INTO message_charges SELECT * FROM message_charge_now WHERE message_id = {{.}};
    INSERT INTO charge_counts (campaign_id, prefix, day, category, pricing_type, billable, n)
        SELECT campaign_id, prefix, day, category, pricing_type, billable, 1 FROM message_charges WHERE message_id = {{.}}
        ON CONFLICT DO UPDATE SET n = n + 1;{{end}}
