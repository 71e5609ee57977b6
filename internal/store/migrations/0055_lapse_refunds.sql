-- A claim that closes not sent (its lease ran out before the request
-- started, or its runner put it back) reached nobody: under shared limits
-- (--limits) what the gate charged for it goes back as well — the count
-- against the cap, the recipient's pair gap, sticky sender and place in
-- the reach window — as the database's own count and contact log do
-- (expireLeases, statesql.Unlog). Its refund is queued in gate_refunds for
-- the next claim (or the run's end) to give back; the refund of a put-back
-- is queued by the record path already (the same claim id: nothing twice).
--
-- The claim id is the one the claim asked the gate with (sharedClaimID:
-- the database's host id, the row, its claim count) and the portfolio its
-- account's; the account and the quota day are the claim's as the gate
-- recorded them (an empty account and day: as admitted). Only the row's
-- latest attempt is its current claim; only a database that has shared
-- limits has a host id.
CREATE TRIGGER gate_refunds_not_sent AFTER UPDATE OF done_at ON attempts
WHEN OLD.done_at IS NULL AND NEW.class = 'not-sent'
BEGIN
    INSERT OR IGNORE INTO gate_refunds (claim, portfolio, account, day, at)
    SELECT h.value || ':' || m.id || ':' || m.attempts, coalesce(p.name, 'default'), '', '', NEW.done_at
    FROM settings AS h, messages AS m JOIN accounts AS a ON a.id = NEW.account_id
        LEFT JOIN portfolios AS p ON p.id = a.portfolio_id
    WHERE h.key = 'limits_host' AND m.id = NEW.message_id
        AND NEW.id = (SELECT max(id) FROM attempts WHERE message_id = NEW.message_id);
END;
