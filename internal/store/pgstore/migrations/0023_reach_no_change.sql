-- reach_counts_change returns at once when the statement changed no row's
-- last contact (its arrays are null: array_agg of no rows). Most calls are
-- such: the send log's upsert at each claim fires the UPDATE trigger
-- (reach_counts_relog) even when every row was new, and each batch of sent
-- outcomes updates sent_at alone. Each ran the count's UPDATE, whose plan
-- joins four tables, to change nothing, under the claim lock. That UPDATE
-- is 0011's function, renamed reach_counts_apply.
ALTER FUNCTION reach_counts_change(TEXT[], BIGINT[], BIGINT[], BIGINT[]) RENAME TO reach_counts_apply;
CREATE FUNCTION reach_counts_change(phones TEXT[], accts BIGINT[], lasts BIGINT[], olds BIGINT[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF phones IS NOT NULL THEN
        PERFORM reach_counts_apply(phones, accts, lasts, olds);
    END IF;
END $$;
