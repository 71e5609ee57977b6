-- The portfolios' reach counted as it goes (issue 25): a claim read
-- count(DISTINCT phone) over the whole 24 h send log, so its cost grew with
-- the window. A portfolio's row holds how many recipients its numbers
-- messaged after `through` (their latest send from any of its numbers);
-- moving `through` on subtracts only the recipients whose latest send it
-- passes, read from contact_log_window.
--
-- The key is a portfolio (portfolio_id, account_id 0) or an account
-- without one (0, its id). A missing row is built from the send log at its
-- first read, so a database from before this version counts right; the
-- triggers in ../reach_counts.sql keep every row exact under any write to
-- the log (the store creates them at open, see ensureReachCounts).
CREATE TABLE reach_counts (
    portfolio_id INTEGER NOT NULL,
    account_id   INTEGER NOT NULL,
    used         INTEGER NOT NULL,
    through      INTEGER NOT NULL,
    PRIMARY KEY (portfolio_id, account_id)
) WITHOUT ROWID;
