-- SQLite's 0050 and the triggers of internal/store/counts.sql that keep it:
-- a campaign's rows that may still cost and its delivered messages' charges,
-- counted by number prefix (substr(phone, 1, 5) places a number as the
-- whole number does), so the estimate and the actual cost read a few kept
-- rows. TestKeptCountsMatchSQLite holds both drivers to one history.

CREATE TABLE cost_counts (
    campaign_id BIGINT NOT NULL,
    prefix      TEXT   NOT NULL,
    n           BIGINT NOT NULL,
    PRIMARY KEY (campaign_id, prefix)
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

INSERT INTO charge_counts (campaign_id, prefix, day, category, pricing_type, billable, n)
    SELECT m.campaign_id, substr(m.phone, 1, 5), d.at / 86400000000000, coalesce(p.pricing, ''),
        coalesce(p.pricing_type, ''), coalesce(p.billable, -1), count(*)
    FROM messages m JOIN (SELECT message_id, min(at) AS at FROM message_statuses
        WHERE status IN ('delivered', 'read') GROUP BY message_id) d ON d.message_id = m.id
    LEFT JOIN (SELECT message_id, pricing, pricing_type, billable,
        row_number() OVER (PARTITION BY message_id ORDER BY at DESC, status COLLATE "C") AS k
        FROM message_statuses WHERE pricing <> '') p ON p.message_id = m.id AND p.k = 1
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

-- message_charge is message m's row of charge_counts as its statuses say,
-- less the one keyed (skip_wamid, skip_status) and with one more (add_status
-- NULL: none): none until a delivered or read status came; the latest
-- status with pricing (the earliest rung among those of one instant)
-- gives the pricing, the first delivered or read the day.
CREATE FUNCTION message_charge(m BIGINT, skip_wamid TEXT, skip_status TEXT, add_status TEXT, add_at BIGINT,
    add_pricing TEXT, add_type TEXT, add_billable BIGINT)
RETURNS TABLE (k_campaign BIGINT, k_prefix TEXT, k_day BIGINT, k_category TEXT, k_type TEXT, k_billable BIGINT)
LANGUAGE sql STABLE AS $$
    WITH s AS (
        SELECT st.status, st.at, st.pricing, st.pricing_type, st.billable FROM message_statuses st
            WHERE st.message_id = m AND (st.wamid, st.status) IS DISTINCT FROM (skip_wamid, skip_status)
        UNION ALL SELECT add_status, add_at, add_pricing, add_type, add_billable WHERE add_status IS NOT NULL
    ), p AS (SELECT s.pricing, s.pricing_type, s.billable FROM s WHERE s.pricing <> ''
        ORDER BY s.at DESC, s.status COLLATE "C" LIMIT 1)
    SELECT c.campaign_id, substr(c.phone, 1, 5),
        (SELECT min(s.at) FROM s WHERE s.status IN ('delivered', 'read')) / 86400000000000,
        coalesce((SELECT p.pricing FROM p), ''), coalesce((SELECT p.pricing_type FROM p), ''),
        coalesce((SELECT p.billable FROM p), -1)
    FROM messages c WHERE c.id = m AND EXISTS (SELECT 1 FROM s WHERE s.status IN ('delivered', 'read'))
$$;

-- charge_counts_move takes message m's charge as it was (its statuses as
-- message_charge's other arguments say) out, and puts it back as it is.
CREATE FUNCTION charge_counts_move(m BIGINT, skip_wamid TEXT, skip_status TEXT, add_status TEXT, add_at BIGINT,
    add_pricing TEXT, add_type TEXT, add_billable BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE charge_counts SET n = n - 1 WHERE (campaign_id, prefix, day, category, pricing_type, billable)
        IN (SELECT * FROM message_charge(m, skip_wamid, skip_status, add_status, add_at, add_pricing, add_type, add_billable));
    INSERT INTO charge_counts (campaign_id, prefix, day, category, pricing_type, billable, n)
        SELECT *, 1 FROM message_charge(m, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
        ON CONFLICT (campaign_id, prefix, day, category, pricing_type, billable) DO UPDATE SET n = charge_counts.n + 1;
END $$;

CREATE FUNCTION charge_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM charge_counts_move(NEW.message_id, NEW.wamid, NEW.status, NULL, NULL, NULL, NULL, NULL);
    RETURN NULL;
END $$;
CREATE TRIGGER charge_counts_insert AFTER INSERT ON message_statuses
    FOR EACH ROW WHEN (NEW.message_id IS NOT NULL AND (NEW.status IN ('delivered', 'read') OR NEW.pricing <> ''))
    EXECUTE FUNCTION charge_counts_insert();

CREATE FUNCTION charge_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.message_id IS NOT NULL THEN
        PERFORM charge_counts_move(OLD.message_id, NULL, NULL, OLD.status, OLD.at, OLD.pricing, OLD.pricing_type, OLD.billable);
    END IF;
    IF NEW.message_id IS NOT NULL THEN
        PERFORM charge_counts_move(NEW.message_id, NEW.wamid, NEW.status, NULL, NULL, NULL, NULL, NULL);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER charge_counts_update AFTER UPDATE OF message_id ON message_statuses
    FOR EACH ROW WHEN (OLD.message_id IS DISTINCT FROM NEW.message_id
        AND (NEW.status IN ('delivered', 'read') OR NEW.pricing <> ''))
    EXECUTE FUNCTION charge_counts_update();

CREATE FUNCTION charge_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM charge_counts_move(OLD.message_id, NULL, NULL, OLD.status, OLD.at, OLD.pricing, OLD.pricing_type, OLD.billable);
    RETURN NULL;
END $$;
CREATE TRIGGER charge_counts_delete AFTER DELETE ON message_statuses
    FOR EACH ROW WHEN (OLD.message_id IS NOT NULL AND (OLD.status IN ('delivered', 'read') OR OLD.pricing <> ''))
    EXECUTE FUNCTION charge_counts_delete();
