-- Meta's messaging limit (issue 12): at most N distinct recipients of
-- business-initiated messages in any moving 24 h, per business portfolio,
-- shared by all its numbers.
--
-- A portfolio groups accounts; an account without one is a portfolio of its
-- own. pinned_limit is the operator's --limit (NULL: none); the lower of it
-- and the limit read from the Graph API applies. margin is the fraction of
-- the limit kept back.
CREATE TABLE portfolios (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT    NOT NULL UNIQUE,
    pinned_limit INTEGER CHECK (pinned_limit IS NULL OR pinned_limit > 0),
    margin       REAL    NOT NULL DEFAULT 0.05 CHECK (margin >= 0 AND margin < 1),
    created_at   INTEGER NOT NULL
);
ALTER TABLE accounts ADD COLUMN portfolio_id INTEGER REFERENCES portfolios(id);

-- The send log the limit is counted from: the latest request each account
-- made to each number (prev_at: the one before, so a request the API
-- proved it refused can be taken back), written in the claim's
-- transaction; and the latest the API accepted (sent_at, 0: none), which
-- decides a recipient's sticky number.
CREATE TABLE contact_log (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    phone      TEXT    NOT NULL,
    last_at    INTEGER NOT NULL,
    prev_at    INTEGER NOT NULL DEFAULT 0,
    sent_at    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, phone)
) WITHOUT ROWID;
CREATE INDEX contact_log_window ON contact_log (account_id, last_at);
CREATE INDEX contact_log_phone ON contact_log (phone, last_at);

-- What was sent before this version: every request that may have been
-- accepted, so the first run after the upgrade counts the last 24 h too.
INSERT INTO contact_log (account_id, phone, last_at, sent_at)
    SELECT t.account_id, m.phone, max(t.claimed_at), coalesce(max(CASE WHEN t.outcome = 'sent' THEN t.done_at END), 0)
    FROM attempts t JOIN messages m ON m.id = t.message_id
    WHERE t.outcome IS NULL OR t.outcome IN ('sent', 'unknown')
    GROUP BY t.account_id, m.phone;
