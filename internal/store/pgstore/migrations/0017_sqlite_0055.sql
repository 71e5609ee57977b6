-- SQLite's 0055: a claim that closes not sent (its lease ran out before
-- the request started, or its runner put it back) queues the refund of
-- what the shared limits charged for it (see SQLite's migration for why).
CREATE FUNCTION gate_refunds_not_sent() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO gate_refunds (claim, portfolio, account, day, at)
    SELECT h.value || ':' || m.id || ':' || m.attempts, coalesce(p.name, 'default'), '', '', NEW.done_at
    FROM settings AS h, messages AS m JOIN accounts AS a ON a.id = NEW.account_id
        LEFT JOIN portfolios AS p ON p.id = a.portfolio_id
    WHERE h.key = 'limits_host' AND m.id = NEW.message_id
        AND NEW.id = (SELECT max(id) FROM attempts WHERE message_id = NEW.message_id)
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER gate_refunds_not_sent AFTER UPDATE OF done_at ON attempts
    FOR EACH ROW WHEN (OLD.done_at IS NULL AND NEW.class = 'not-sent') EXECUTE FUNCTION gate_refunds_not_sent();
