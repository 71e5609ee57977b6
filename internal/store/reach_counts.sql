-- The triggers that keep migration 0040's running reach counts, in the
-- transaction of the statement that writes the send log, whichever code
-- runs it. The store runs this file, after emptying reach_counts (each
-- count is built again at its next read), whenever one of them is missing:
-- a migration that rebuilds contact_log or accounts drops them.
--
-- The three triggers on contact_log spell the same move (Postgres's
-- reach_counts_change) each: written once, as tier_counts.sql writes its
-- share (a view whose INSTEAD OF trigger moves the count), it would cost a
-- nested trigger for every send a claim logs, about 4 % of a claim's CPU
-- (BenchmarkClaimReachWindow), where tier_counts' triggers fire for the
-- rare attempt. TestReachCountMatchesDistinctCount holds all three.

DROP TRIGGER IF EXISTS reach_counts_log;
DROP TRIGGER IF EXISTS reach_counts_relog;
DROP TRIGGER IF EXISTS reach_counts_unlog;
DROP TRIGGER IF EXISTS reach_counts_members;
DROP TRIGGER IF EXISTS reach_counts_account_gone;

-- A recipient enters a count when one of its numbers messages them and
-- none of its numbers had since `through`.
CREATE TRIGGER reach_counts_log AFTER INSERT ON contact_log
WHEN EXISTS (SELECT 1 FROM reach_counts)
BEGIN
    UPDATE reach_counts SET used = used + 1
    WHERE (portfolio_id, account_id) = (SELECT coalesce(a.portfolio_id, 0), CASE WHEN a.portfolio_id IS NULL THEN a.id ELSE 0 END
            FROM accounts a WHERE a.id = NEW.account_id)
        AND NEW.last_at > through
        AND NOT EXISTS (SELECT 1 FROM contact_log c JOIN accounts a ON a.id = c.account_id
            WHERE c.phone = NEW.phone AND c.account_id <> NEW.account_id AND c.last_at > reach_counts.through
                AND reach_counts.portfolio_id <> 0 AND a.portfolio_id = reach_counts.portfolio_id);
END;

-- A later send moves a recipient in; a send taken back (last_at back to
-- prev_at) may move them out.
CREATE TRIGGER reach_counts_relog AFTER UPDATE OF last_at ON contact_log
WHEN EXISTS (SELECT 1 FROM reach_counts)
BEGIN
    UPDATE reach_counts SET used = used + (NEW.last_at > through) - (OLD.last_at > through)
    WHERE (portfolio_id, account_id) = (SELECT coalesce(a.portfolio_id, 0), CASE WHEN a.portfolio_id IS NULL THEN a.id ELSE 0 END
            FROM accounts a WHERE a.id = NEW.account_id)
        AND (NEW.last_at > through) <> (OLD.last_at > through)
        AND NOT EXISTS (SELECT 1 FROM contact_log c JOIN accounts a ON a.id = c.account_id
            WHERE c.phone = NEW.phone AND c.account_id <> NEW.account_id AND c.last_at > reach_counts.through
                AND reach_counts.portfolio_id <> 0 AND a.portfolio_id = reach_counts.portfolio_id);
END;

CREATE TRIGGER reach_counts_unlog AFTER DELETE ON contact_log
WHEN EXISTS (SELECT 1 FROM reach_counts)
BEGIN
    UPDATE reach_counts SET used = used - 1
    WHERE (portfolio_id, account_id) = (SELECT coalesce(a.portfolio_id, 0), CASE WHEN a.portfolio_id IS NULL THEN a.id ELSE 0 END
            FROM accounts a WHERE a.id = OLD.account_id)
        AND OLD.last_at > through
        AND NOT EXISTS (SELECT 1 FROM contact_log c JOIN accounts a ON a.id = c.account_id
            WHERE c.phone = OLD.phone AND c.account_id <> OLD.account_id AND c.last_at > reach_counts.through
                AND reach_counts.portfolio_id <> 0 AND a.portfolio_id = reach_counts.portfolio_id);
END;

-- Whose sends count changed: every count is built again at its next read.
CREATE TRIGGER reach_counts_members AFTER UPDATE OF portfolio_id ON accounts
WHEN OLD.portfolio_id IS NOT NEW.portfolio_id
BEGIN
    DELETE FROM reach_counts;
END;

CREATE TRIGGER reach_counts_account_gone AFTER DELETE ON accounts
BEGIN
    DELETE FROM reach_counts;
END;
