-- Outcomes are recorded outside the claim lock (internal/store/pgstore/
-- record.go), so a claim and the outcomes of other hosts now move the same
-- kept counts at once. Two transactions that lock the same count rows in
-- different orders deadlock (Postgres sees it after deadlock_timeout, a
-- second, and one of them runs again), so every writer takes them in one
-- order: (campaign, account, state).
--
-- message_counts: a statement's moves, netted, written one count at a
-- time in key order (0011's one statement locked its rows in whatever
-- order its plan met them). A count is lowered only where it is, raised or
-- made, as before. A claim's statements go one per number in the numbers'
-- order (claimtx.go, Take); a batch of sent outcomes is one statement.
CREATE OR REPLACE FUNCTION message_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    d RECORD;
BEGIN
    FOR d IN
        WITH moved AS (
            SELECT o.campaign_id AS o_c, coalesce(o.account_id, 0) AS o_a, o.state AS o_s,
                w.campaign_id AS w_c, coalesce(w.account_id, 0) AS w_a, w.state AS w_s
            FROM old_rows o JOIN new_rows w ON w.id = o.id
            WHERE o.tally IS NOT DISTINCT FROM w.tally
                AND (o.state IS DISTINCT FROM w.state OR o.account_id IS DISTINCT FROM w.account_id)
        )
        SELECT c, a, s, sum(n) AS n FROM (
            SELECT o_c AS c, o_a AS a, o_s AS s, -1 AS n FROM moved
            UNION ALL SELECT w_c, w_a, w_s, 1 FROM moved) m
        GROUP BY c, a, s HAVING sum(n) <> 0 ORDER BY c, a, s
    LOOP
        IF d.n < 0 THEN
            UPDATE message_counts SET n = n + d.n WHERE campaign_id = d.c AND state = d.s AND account_id = d.a;
        ELSE
            INSERT INTO message_counts (campaign_id, account_id, state, n) VALUES (d.c, d.a, d.s, d.n)
                ON CONFLICT (campaign_id, state, account_id) DO UPDATE SET n = message_counts.n + excluded.n;
        END IF;
    END LOOP;
    RETURN NULL;
END $$;

-- campaign_spend: a move between two states the budget counts alike (in
-- flight to accepted: every sent outcome) at the same price changes
-- nothing; its trigger no longer runs for it. It locked the campaign's one
-- row in every priced batch of sent outcomes (batches and the claim waited
-- for each other on it), before the counts, where a batch that locks its
-- counts first (record.go, lockInFlightCounts) takes it after them.
DROP TRIGGER messages_spend ON messages;
CREATE TRIGGER messages_spend AFTER UPDATE OF state, price ON messages
    FOR EACH ROW WHEN ((NEW.price <> 0 OR OLD.price <> 0) AND (NEW.price <> OLD.price
        OR (NEW.state IN ('sending', 'sent', 'unknown')) <> (OLD.state IN ('sending', 'sent', 'unknown'))))
    EXECUTE FUNCTION messages_spend();
