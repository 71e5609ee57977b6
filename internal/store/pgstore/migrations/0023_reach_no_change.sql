-- reach_counts_change returns at once when the statement changed no row's
-- last contact (its arrays are null: array_agg of no rows). Most calls are
-- such: the send log's upsert at each claim fires the UPDATE trigger
-- (reach_counts_relog) even when every row was new, and each batch of sent
-- outcomes updates sent_at alone. Each ran the count's UPDATE, whose plan
-- joins four tables, to change nothing, under the claim lock. The function
-- is 0011's otherwise.
CREATE OR REPLACE FUNCTION reach_counts_change(phones TEXT[], accts BIGINT[], lasts BIGINT[], olds BIGINT[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF phones IS NULL THEN
        RETURN;
    END IF;
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
