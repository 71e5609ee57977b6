-- Counts kept by triggers so status never scans a campaign's rows: rows by
-- state and account, delivery reports, attempts by minute. A row's first
-- count is written by the import (tally = 1 rows are counted there); the
-- triggers follow every later move, exactly as SQLite's do.

CREATE TABLE message_counts (
    campaign_id BIGINT NOT NULL,
    account_id  BIGINT NOT NULL,
    state       TEXT   NOT NULL,
    n           BIGINT NOT NULL,
    PRIMARY KEY (campaign_id, state, account_id)
);

CREATE TABLE delivery_counts (
    campaign_id       BIGINT NOT NULL,
    account_id        BIGINT NOT NULL,
    reported          BIGINT NOT NULL,
    delivered         BIGINT NOT NULL, -- delivered or read
    read              BIGINT NOT NULL,
    failed_after_send BIGINT NOT NULL,
    PRIMARY KEY (campaign_id, account_id)
);

CREATE TABLE attempt_rollup (
    campaign_id BIGINT NOT NULL,
    account_id  BIGINT NOT NULL,
    minute      BIGINT NOT NULL,
    attempts    BIGINT NOT NULL,
    throttled   BIGINT NOT NULL,
    sent        BIGINT NOT NULL,
    first_at    BIGINT NOT NULL, -- min(claimed_at)
    last_at     BIGINT NOT NULL, -- max(claimed_at)
    done_at     BIGINT NOT NULL, -- max(coalesce(done_at, claimed_at))
    PRIMARY KEY (campaign_id, account_id, minute)
);
CREATE INDEX attempt_rollup_minute ON attempt_rollup (minute);

CREATE TABLE attempt_firsts (
    campaign_id  BIGINT NOT NULL,
    account_id   BIGINT NOT NULL,
    minute       BIGINT NOT NULL,
    prev_any     BIGINT NOT NULL,
    prev_account BIGINT NOT NULL,
    n            BIGINT NOT NULL,
    PRIMARY KEY (campaign_id, account_id, minute, prev_any, prev_account)
);

CREATE FUNCTION message_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE message_counts SET n = n - 1
        WHERE campaign_id = OLD.campaign_id AND state = OLD.state AND account_id = coalesce(OLD.account_id, 0);
    INSERT INTO message_counts (campaign_id, account_id, state, n)
        VALUES (NEW.campaign_id, coalesce(NEW.account_id, 0), NEW.state, 1)
        ON CONFLICT (campaign_id, state, account_id) DO UPDATE SET n = message_counts.n + 1;
    RETURN NULL;
END $$;
CREATE TRIGGER message_counts_update AFTER UPDATE OF state, account_id ON messages
    FOR EACH ROW WHEN (OLD.tally IS NOT DISTINCT FROM NEW.tally
        AND (OLD.state IS DISTINCT FROM NEW.state OR OLD.account_id IS DISTINCT FROM NEW.account_id))
    EXECUTE FUNCTION message_counts_update();

CREATE FUNCTION message_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE message_counts SET n = n - 1
        WHERE campaign_id = OLD.campaign_id AND state = OLD.state AND account_id = coalesce(OLD.account_id, 0);
    RETURN NULL;
END $$;
CREATE TRIGGER message_counts_delete AFTER DELETE ON messages
    FOR EACH ROW EXECUTE FUNCTION message_counts_delete();

CREATE FUNCTION delivery_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE delivery_counts SET reported = reported - (OLD.delivery IS NOT NULL)::int,
        delivered = delivered - (coalesce(OLD.delivery, '') IN ('delivered', 'read'))::int,
        read = read - (OLD.delivery IS NOT DISTINCT FROM 'read')::int,
        failed_after_send = failed_after_send - OLD.failed_after_send
        WHERE campaign_id = OLD.campaign_id AND account_id = coalesce(OLD.account_id, 0);
    INSERT INTO delivery_counts (campaign_id, account_id, reported, delivered, read, failed_after_send)
        SELECT NEW.campaign_id, coalesce(NEW.account_id, 0), (NEW.delivery IS NOT NULL)::int,
            (coalesce(NEW.delivery, '') IN ('delivered', 'read'))::int,
            (NEW.delivery IS NOT DISTINCT FROM 'read')::int, NEW.failed_after_send
        WHERE NEW.delivery IS NOT NULL OR NEW.failed_after_send = 1
        ON CONFLICT (campaign_id, account_id) DO UPDATE SET
            reported = delivery_counts.reported + excluded.reported,
            delivered = delivery_counts.delivered + excluded.delivered,
            read = delivery_counts.read + excluded.read,
            failed_after_send = delivery_counts.failed_after_send + excluded.failed_after_send;
    RETURN NULL;
END $$;
CREATE TRIGGER delivery_counts_update AFTER UPDATE OF delivery, failed_after_send, account_id ON messages
    FOR EACH ROW WHEN (OLD.delivery IS DISTINCT FROM NEW.delivery
        OR OLD.failed_after_send IS DISTINCT FROM NEW.failed_after_send
        OR (OLD.account_id IS DISTINCT FROM NEW.account_id AND (OLD.delivery IS NOT NULL OR OLD.failed_after_send = 1)))
    EXECUTE FUNCTION delivery_counts_update();

CREATE FUNCTION delivery_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE delivery_counts SET reported = reported - (OLD.delivery IS NOT NULL)::int,
        delivered = delivered - (coalesce(OLD.delivery, '') IN ('delivered', 'read'))::int,
        read = read - (OLD.delivery IS NOT DISTINCT FROM 'read')::int,
        failed_after_send = failed_after_send - OLD.failed_after_send
        WHERE campaign_id = OLD.campaign_id AND account_id = coalesce(OLD.account_id, 0);
    RETURN NULL;
END $$;
CREATE TRIGGER delivery_counts_delete AFTER DELETE ON messages
    FOR EACH ROW WHEN (OLD.delivery IS NOT NULL OR OLD.failed_after_send = 1)
    EXECUTE FUNCTION delivery_counts_delete();

CREATE FUNCTION attempt_rollup_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cid BIGINT := (SELECT campaign_id FROM messages WHERE id = NEW.message_id);
BEGIN
    INSERT INTO attempt_rollup (campaign_id, account_id, minute, attempts, throttled, sent, first_at, last_at, done_at)
        VALUES (cid, NEW.account_id, NEW.claimed_at / 60000000000, 1,
            (NEW.class IS NOT NULL AND NEW.class IN ('throttled', 'pair-throttled'))::int,
            (NEW.outcome IS NOT DISTINCT FROM 'sent')::int,
            NEW.claimed_at, NEW.claimed_at, coalesce(NEW.done_at, NEW.claimed_at))
        ON CONFLICT (campaign_id, account_id, minute) DO UPDATE SET
            attempts = attempt_rollup.attempts + 1,
            throttled = attempt_rollup.throttled + excluded.throttled,
            sent = attempt_rollup.sent + excluded.sent,
            first_at = least(attempt_rollup.first_at, excluded.first_at),
            last_at = greatest(attempt_rollup.last_at, excluded.last_at),
            done_at = greatest(attempt_rollup.done_at, excluded.done_at);
    INSERT INTO attempt_firsts (campaign_id, account_id, minute, prev_any, prev_account, n)
        VALUES (cid, NEW.account_id, NEW.claimed_at / 60000000000,
            coalesce((SELECT claimed_at FROM attempts WHERE message_id = NEW.message_id AND id < NEW.id
                ORDER BY id DESC LIMIT 1) / 60000000000, -1),
            coalesce((SELECT claimed_at FROM attempts WHERE message_id = NEW.message_id AND account_id = NEW.account_id
                AND id < NEW.id ORDER BY id DESC LIMIT 1) / 60000000000, -1),
            1)
        ON CONFLICT (campaign_id, account_id, minute, prev_any, prev_account) DO UPDATE SET n = attempt_firsts.n + 1;
    RETURN NULL;
END $$;
CREATE TRIGGER attempt_rollup_insert AFTER INSERT ON attempts
    FOR EACH ROW WHEN (NEW.tally = 0) EXECUTE FUNCTION attempt_rollup_insert();

CREATE FUNCTION attempt_rollup_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE attempt_rollup SET
        throttled = throttled + (NEW.class IS NOT NULL AND NEW.class IN ('throttled', 'pair-throttled'))::int
            - (OLD.class IS NOT NULL AND OLD.class IN ('throttled', 'pair-throttled'))::int,
        sent = sent + (NEW.outcome IS NOT DISTINCT FROM 'sent')::int - (OLD.outcome IS NOT DISTINCT FROM 'sent')::int,
        done_at = greatest(done_at, coalesce(NEW.done_at, NEW.claimed_at))
        WHERE campaign_id = (SELECT campaign_id FROM messages WHERE id = NEW.message_id)
            AND account_id = NEW.account_id AND minute = NEW.claimed_at / 60000000000;
    RETURN NULL;
END $$;
CREATE TRIGGER attempt_rollup_update AFTER UPDATE OF outcome, class, done_at ON attempts
    FOR EACH ROW WHEN (OLD.tally IS NOT DISTINCT FROM NEW.tally) EXECUTE FUNCTION attempt_rollup_update();

CREATE FUNCTION campaign_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM message_counts WHERE campaign_id = OLD.id;
    DELETE FROM attempt_rollup WHERE campaign_id = OLD.id;
    DELETE FROM attempt_firsts WHERE campaign_id = OLD.id;
    DELETE FROM delivery_counts WHERE campaign_id = OLD.id;
    RETURN NULL;
END $$;
CREATE TRIGGER campaign_counts_delete AFTER DELETE ON campaigns
    FOR EACH ROW EXECUTE FUNCTION campaign_counts_delete();
