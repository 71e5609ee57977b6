-- A portfolio's reach (distinct recipients in its window) kept as a
-- running count from the contact log, as SQLite's 0040 keeps it.

CREATE TABLE reach_counts (
    portfolio_id BIGINT NOT NULL,
    account_id   BIGINT NOT NULL,
    used         BIGINT NOT NULL,
    through      BIGINT NOT NULL,
    PRIMARY KEY (portfolio_id, account_id)
);

-- reach_counts_change moves the count of the unit phone's account belongs
-- to by delta, unless another account of its portfolio reached the phone
-- after the count's start (then the phone is counted already).
CREATE FUNCTION reach_counts_change(p_phone TEXT, p_account BIGINT, p_last_at BIGINT, p_old_at BIGINT, p_delta INT)
RETURNS void LANGUAGE sql AS $$
    UPDATE reach_counts SET used = used + p_delta * ((p_last_at > through)::int - (p_old_at > through)::int)
    WHERE (portfolio_id, account_id) = (SELECT coalesce(a.portfolio_id, 0), CASE WHEN a.portfolio_id IS NULL THEN a.id ELSE 0 END
            FROM accounts a WHERE a.id = p_account)
        AND (p_last_at > through) <> (p_old_at > through)
        AND NOT EXISTS (SELECT 1 FROM contact_log c JOIN accounts a ON a.id = c.account_id
            WHERE c.phone = p_phone AND c.account_id <> p_account AND c.last_at > reach_counts.through
                AND reach_counts.portfolio_id <> 0 AND a.portfolio_id = reach_counts.portfolio_id);
$$;

CREATE FUNCTION reach_counts_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM reach_counts) THEN
        IF TG_OP = 'INSERT' THEN
            -- a new row: as if its last contact had been before every start
            PERFORM reach_counts_change(NEW.phone, NEW.account_id, NEW.last_at, -9223372036854775808, 1);
        ELSIF TG_OP = 'UPDATE' THEN
            PERFORM reach_counts_change(NEW.phone, NEW.account_id, NEW.last_at, OLD.last_at, 1);
        ELSE
            PERFORM reach_counts_change(OLD.phone, OLD.account_id, -9223372036854775808, OLD.last_at, 1);
        END IF;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER reach_counts_log AFTER INSERT OR DELETE OR UPDATE OF last_at ON contact_log
    FOR EACH ROW EXECUTE FUNCTION reach_counts_log();

CREATE FUNCTION reach_counts_reset() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM reach_counts;
    RETURN NULL;
END $$;
CREATE TRIGGER reach_counts_members AFTER UPDATE OF portfolio_id ON accounts
    FOR EACH ROW WHEN (OLD.portfolio_id IS DISTINCT FROM NEW.portfolio_id)
    EXECUTE FUNCTION reach_counts_reset();
CREATE TRIGGER reach_counts_account_gone AFTER DELETE ON accounts
    FOR EACH ROW EXECUTE FUNCTION reach_counts_reset();
