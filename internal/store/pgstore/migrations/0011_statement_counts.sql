-- The kept counts the sending path moves (message_counts, attempt_rollup,
-- attempt_firsts, reach_counts) follow each statement once, over its
-- transition tables, instead of once per row: a claim of 64 rows fired
-- some 300 trigger calls of a statement or two each, and reach_counts_log
-- called a SQL function Postgres plans again at every call (1 ms each).
-- That was most of a sending transaction's time, all of it under the
-- claim lock. Each function counts exactly what the row trigger it
-- replaces did (0004, 0005): after-row triggers run once the statement is
-- done and see the table as these do, and what one row adds does not
-- depend on what another's trigger wrote, so the sum over the statement
-- is the same. Transition tables allow neither a column list nor a WHEN,
-- so each function picks the rows the old trigger's UPDATE OF and WHEN
-- let through (a column set to the value it had moved nothing then
-- either). The rarely fired triggers (deliveries, costs, spend, tiers)
-- keep their row form: their WHEN passes over the sending path's rows.

-- A row's state or account moved: out of its old count, into its new one.
-- A count is lowered only where it is (the old UPDATE), raised or made.
DROP TRIGGER message_counts_update ON messages;
DROP FUNCTION message_counts_update();
CREATE FUNCTION message_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH moved AS (
        SELECT o.campaign_id AS o_c, coalesce(o.account_id, 0) AS o_a, o.state AS o_s,
            w.campaign_id AS w_c, coalesce(w.account_id, 0) AS w_a, w.state AS w_s
        FROM old_rows o JOIN new_rows w ON w.id = o.id
        WHERE o.tally IS NOT DISTINCT FROM w.tally
            AND (o.state IS DISTINCT FROM w.state OR o.account_id IS DISTINCT FROM w.account_id)
    ), net AS (
        SELECT c, a, s, sum(n) AS n FROM (
            SELECT o_c AS c, o_a AS a, o_s AS s, -1 AS n FROM moved
            UNION ALL SELECT w_c, w_a, w_s, 1 FROM moved) d
        GROUP BY c, a, s
    ), lowered AS (
        UPDATE message_counts m SET n = m.n + net.n FROM net
        WHERE net.n < 0 AND m.campaign_id = net.c AND m.state = net.s AND m.account_id = net.a
    )
    INSERT INTO message_counts (campaign_id, account_id, state, n)
        SELECT c, a, s, n FROM net WHERE n > 0
        ON CONFLICT (campaign_id, state, account_id) DO UPDATE SET n = message_counts.n + excluded.n;
    RETURN NULL;
END $$;
CREATE TRIGGER message_counts_update AFTER UPDATE ON messages
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION message_counts_update();

-- New attempts: their minute's rollup, and the minutes of the attempts
-- before each (any account's, its account's) in attempt_firsts.
DROP TRIGGER attempt_rollup_insert ON attempts;
DROP FUNCTION attempt_rollup_insert();
CREATE FUNCTION attempt_rollup_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH a AS (
        SELECT (SELECT campaign_id FROM messages WHERE id = n.message_id) AS cid, n.account_id,
            n.claimed_at / 60000000000 AS minute, n.claimed_at, coalesce(n.done_at, n.claimed_at) AS done,
            (n.class IS NOT NULL AND n.class IN ('throttled', 'pair-throttled'))::int AS throttled,
            (n.outcome IS NOT DISTINCT FROM 'sent')::int AS sent,
            coalesce((SELECT p.claimed_at FROM attempts p WHERE p.message_id = n.message_id AND p.id < n.id
                ORDER BY p.id DESC LIMIT 1) / 60000000000, -1) AS prev_any,
            coalesce((SELECT p.claimed_at FROM attempts p WHERE p.message_id = n.message_id AND p.account_id = n.account_id
                AND p.id < n.id ORDER BY p.id DESC LIMIT 1) / 60000000000, -1) AS prev_account
        FROM new_rows n WHERE n.tally = 0
    ), rolled AS (
        INSERT INTO attempt_rollup (campaign_id, account_id, minute, attempts, throttled, sent, first_at, last_at, done_at)
            SELECT cid, account_id, minute, count(*), sum(throttled), sum(sent), min(claimed_at), max(claimed_at), max(done)
            FROM a GROUP BY cid, account_id, minute
            ON CONFLICT (campaign_id, account_id, minute) DO UPDATE SET
                attempts = attempt_rollup.attempts + excluded.attempts,
                throttled = attempt_rollup.throttled + excluded.throttled,
                sent = attempt_rollup.sent + excluded.sent,
                first_at = least(attempt_rollup.first_at, excluded.first_at),
                last_at = greatest(attempt_rollup.last_at, excluded.last_at),
                done_at = greatest(attempt_rollup.done_at, excluded.done_at)
    )
    INSERT INTO attempt_firsts (campaign_id, account_id, minute, prev_any, prev_account, n)
        SELECT cid, account_id, minute, prev_any, prev_account, count(*)
        FROM a GROUP BY cid, account_id, minute, prev_any, prev_account
        ON CONFLICT (campaign_id, account_id, minute, prev_any, prev_account) DO UPDATE SET n = attempt_firsts.n + excluded.n;
    RETURN NULL;
END $$;
CREATE TRIGGER attempt_rollup_insert AFTER INSERT ON attempts
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION attempt_rollup_insert();

-- An attempt's outcome, class or end moved: its minute's throttled and
-- sent by the difference, its end the latest.
DROP TRIGGER attempt_rollup_update ON attempts;
DROP FUNCTION attempt_rollup_update();
CREATE FUNCTION attempt_rollup_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE attempt_rollup r SET throttled = r.throttled + g.throttled, sent = r.sent + g.sent,
        done_at = greatest(r.done_at, g.done)
    FROM (
        SELECT (SELECT campaign_id FROM messages WHERE id = w.message_id) AS cid, w.account_id,
            w.claimed_at / 60000000000 AS minute,
            sum((w.class IS NOT NULL AND w.class IN ('throttled', 'pair-throttled'))::int
                - (o.class IS NOT NULL AND o.class IN ('throttled', 'pair-throttled'))::int) AS throttled,
            sum((w.outcome IS NOT DISTINCT FROM 'sent')::int - (o.outcome IS NOT DISTINCT FROM 'sent')::int) AS sent,
            max(coalesce(w.done_at, w.claimed_at)) AS done
        FROM old_rows o JOIN new_rows w ON w.id = o.id
        WHERE o.tally IS NOT DISTINCT FROM w.tally
            AND (o.outcome, o.class, o.done_at) IS DISTINCT FROM (w.outcome, w.class, w.done_at)
        GROUP BY 1, 2, 3
    ) g
    WHERE r.campaign_id = g.cid AND r.account_id = g.account_id AND r.minute = g.minute;
    RETURN NULL;
END $$;
CREATE TRIGGER attempt_rollup_update AFTER UPDATE ON attempts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION attempt_rollup_update();

-- A portfolio's reach: what reach_counts_change did for one row, for a
-- statement's changes (phone, account, last contact, the one before) at
-- once, fired once per event as SQLite's three triggers are. A change
-- moves the count of its account's unit by whether it crosses the
-- count's start, unless another number of the portfolio reached the
-- phone after that start. plpgsql, not sql: its plan is kept.
DROP TRIGGER reach_counts_log ON contact_log;
DROP FUNCTION reach_counts_log();
DROP FUNCTION reach_counts_change(TEXT, BIGINT, BIGINT, BIGINT, INT);
CREATE FUNCTION reach_counts_change(phones TEXT[], accts BIGINT[], lasts BIGINT[], olds BIGINT[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE reach_counts r SET used = r.used + g.d FROM (
        SELECT u.portfolio_id, u.account_id, sum((ch.last_at > u.through)::int - (ch.old_at > u.through)::int) AS d
        FROM unnest(phones, accts, lasts, olds) AS ch(phone, account_id, last_at, old_at)
        JOIN accounts a ON a.id = ch.account_id
        JOIN reach_counts u ON u.portfolio_id = coalesce(a.portfolio_id, 0)
            AND u.account_id = CASE WHEN a.portfolio_id IS NULL THEN a.id ELSE 0 END
        WHERE (ch.last_at > u.through) <> (ch.old_at > u.through)
            AND NOT EXISTS (SELECT 1 FROM contact_log c JOIN accounts o ON o.id = c.account_id
                WHERE c.phone = ch.phone AND c.account_id <> ch.account_id AND c.last_at > u.through
                    AND u.portfolio_id <> 0 AND o.portfolio_id = u.portfolio_id)
        GROUP BY 1, 2) g
    WHERE r.portfolio_id = g.portfolio_id AND r.account_id = g.account_id;
END $$;

CREATE FUNCTION reach_counts_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM reach_counts) THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'INSERT' THEN
        -- a new row: as if its last contact had been before every start
        PERFORM reach_counts_change(array_agg(phone), array_agg(account_id), array_agg(last_at),
            array_agg((-9223372036854775808)::bigint)) FROM new_rows;
    ELSIF TG_OP = 'UPDATE' THEN
        -- phone and account are a row's key: no statement moves them
        PERFORM reach_counts_change(array_agg(w.phone), array_agg(w.account_id), array_agg(w.last_at), array_agg(o.last_at))
            FROM old_rows o JOIN new_rows w ON w.phone = o.phone AND w.account_id = o.account_id
            WHERE w.last_at <> o.last_at;
    ELSE
        -- a row gone: as if its last contact were now before every start
        PERFORM reach_counts_change(array_agg(phone), array_agg(account_id), array_agg((-9223372036854775808)::bigint),
            array_agg(last_at)) FROM old_rows;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER reach_counts_log AFTER INSERT ON contact_log
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_counts_log();
CREATE TRIGGER reach_counts_relog AFTER UPDATE ON contact_log
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_counts_log();
CREATE TRIGGER reach_counts_unlog AFTER DELETE ON contact_log
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_counts_log();
