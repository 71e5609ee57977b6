-- SQLite's 0050 and the triggers of internal/store/counts.sql that keep it:
-- a campaign's rows that may still cost and its delivered messages' charges,
-- counted by number prefix (substr(phone, 1, 5) places a number as the
-- whole number does), so the estimate and the actual cost read a few kept
-- rows. TestCostCountsMatchSQLite holds both drivers to one history.

CREATE TABLE cost_counts (
    campaign_id BIGINT NOT NULL,
    prefix      TEXT   NOT NULL,
    n           BIGINT NOT NULL,
    PRIMARY KEY (campaign_id, prefix)
);

CREATE TABLE message_charges (
    message_id   BIGINT PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    campaign_id  BIGINT NOT NULL,
    prefix       TEXT   NOT NULL,
    day          BIGINT NOT NULL, -- first delivered or read at / 86400e9
    category     TEXT   NOT NULL,
    pricing_type TEXT   NOT NULL,
    billable     BIGINT NOT NULL  -- -1: no status said
);

CREATE TABLE charge_counts (
    campaign_id  BIGINT NOT NULL,
    prefix       TEXT   NOT NULL,
    day          BIGINT NOT NULL, -- first delivered or read at / 86400e9
    category     TEXT   NOT NULL,
    pricing_type TEXT   NOT NULL,
    billable     BIGINT NOT NULL, -- -1: no status said
    n            BIGINT NOT NULL,
    PRIMARY KEY (campaign_id, prefix, day, category, pricing_type, billable)
);

INSERT INTO cost_counts (campaign_id, prefix, n)
    SELECT campaign_id, substr(phone, 1, 5), count(*) FROM messages
    WHERE state IN ('pending', 'sending', 'sent', 'unknown') GROUP BY 1, 2;

-- What each message's statuses say it was charged, none until a delivered
-- or read status came: the first of those gives the day, the latest status
-- with pricing (the earliest rung among those of one instant) the pricing.
-- The triggers copy a message's row of it into message_charges when a
-- status of the message comes or is matched; read for one message it
-- costs a few index reads.
CREATE VIEW message_charge_now AS
SELECT m.id AS message_id, m.campaign_id AS campaign_id, substr(m.phone, 1, 5) AS prefix,
    (SELECT min(s.at) FROM message_statuses s WHERE s.message_id = m.id AND s.status IN ('delivered', 'read'))
        / 86400000000000 AS day,
    coalesce((SELECT s.pricing FROM message_statuses s WHERE s.message_id = m.id AND s.pricing <> ''
        ORDER BY s.at DESC, s.status COLLATE "C" LIMIT 1), '') AS category,
    coalesce((SELECT s.pricing_type FROM message_statuses s WHERE s.message_id = m.id AND s.pricing <> ''
        ORDER BY s.at DESC, s.status COLLATE "C" LIMIT 1), '') AS pricing_type,
    coalesce((SELECT s.billable FROM message_statuses s WHERE s.message_id = m.id AND s.pricing <> ''
        ORDER BY s.at DESC, s.status COLLATE "C" LIMIT 1), -1) AS billable
FROM messages m
WHERE EXISTS (SELECT 1 FROM message_statuses s WHERE s.message_id = m.id AND s.status IN ('delivered', 'read'));

INSERT INTO message_charges SELECT * FROM message_charge_now;

INSERT INTO charge_counts (campaign_id, prefix, day, category, pricing_type, billable, n)
    SELECT campaign_id, prefix, day, category, pricing_type, billable, count(*) FROM message_charges
    GROUP BY 1, 2, 3, 4, 5, 6;

CREATE FUNCTION cost_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO cost_counts (campaign_id, prefix, n)
        VALUES (NEW.campaign_id, substr(NEW.phone, 1, 5),
            CASE WHEN NEW.state IN ('pending', 'sending', 'sent', 'unknown') THEN 1 ELSE -1 END)
        ON CONFLICT (campaign_id, prefix) DO UPDATE SET n = cost_counts.n + excluded.n;
    RETURN NULL;
END $$;
CREATE TRIGGER cost_counts_update AFTER UPDATE OF state ON messages
    FOR EACH ROW WHEN ((OLD.state IN ('pending', 'sending', 'sent', 'unknown'))
        IS DISTINCT FROM (NEW.state IN ('pending', 'sending', 'sent', 'unknown')))
    EXECUTE FUNCTION cost_counts_update();

CREATE FUNCTION cost_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE cost_counts SET n = n - 1 WHERE campaign_id = OLD.campaign_id AND prefix = substr(OLD.phone, 1, 5);
    RETURN NULL;
END $$;
CREATE TRIGGER cost_counts_delete AFTER DELETE ON messages
    FOR EACH ROW WHEN (OLD.state IN ('pending', 'sending', 'sent', 'unknown'))
    EXECUTE FUNCTION cost_counts_delete();

CREATE FUNCTION cost_counts_campaign_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM cost_counts WHERE campaign_id = OLD.id;
    DELETE FROM charge_counts WHERE campaign_id = OLD.id;
    RETURN NULL;
END $$;
CREATE TRIGGER cost_counts_campaign_gone AFTER DELETE ON campaigns
    FOR EACH ROW EXECUTE FUNCTION cost_counts_campaign_gone();

-- charge_counts_recharge replaces message m's row of message_charges with
-- what its statuses say now and moves charge_counts by the difference:
-- the row triggers of one statement run once it is done, each seeing all
-- the statuses it moved, and each leaves the same right answer.
CREATE FUNCTION charge_counts_recharge(m BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE charge_counts SET n = n - 1 WHERE (campaign_id, prefix, day, category, pricing_type, billable)
        IN (SELECT c.campaign_id, c.prefix, c.day, c.category, c.pricing_type, c.billable FROM message_charges c
            WHERE c.message_id = m);
    DELETE FROM message_charges WHERE message_id = m;
    INSERT INTO message_charges SELECT * FROM message_charge_now WHERE message_id = m;
    INSERT INTO charge_counts (campaign_id, prefix, day, category, pricing_type, billable, n)
        SELECT c.campaign_id, c.prefix, c.day, c.category, c.pricing_type, c.billable, 1 FROM message_charges c
            WHERE c.message_id = m
        ON CONFLICT (campaign_id, prefix, day, category, pricing_type, billable) DO UPDATE SET n = charge_counts.n + 1;
END $$;

CREATE FUNCTION charge_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM charge_counts_recharge(NEW.message_id);
    RETURN NULL;
END $$;
CREATE TRIGGER charge_counts_insert AFTER INSERT ON message_statuses
    FOR EACH ROW WHEN (NEW.message_id IS NOT NULL AND (NEW.status IN ('delivered', 'read') OR NEW.pricing <> ''))
    EXECUTE FUNCTION charge_counts_insert();

CREATE FUNCTION charge_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.message_id IS NOT NULL THEN
        PERFORM charge_counts_recharge(OLD.message_id);
    END IF;
    PERFORM charge_counts_recharge(NEW.message_id);
    RETURN NULL;
END $$;
CREATE TRIGGER charge_counts_update AFTER UPDATE OF message_id ON message_statuses
    FOR EACH ROW WHEN (OLD.message_id IS DISTINCT FROM NEW.message_id
        AND (NEW.status IN ('delivered', 'read') OR NEW.pricing <> ''))
    EXECUTE FUNCTION charge_counts_update();
