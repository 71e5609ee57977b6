-- The send log keyed by recipient first (issue 15): its primary key
-- (phone, account_id) answers the per-recipient lookups (the reach window's
-- last send, stickiness) that contact_log_phone served, so that index goes
-- and each claim and answer writes one B-tree less. The window's scan by
-- account keeps contact_log_window.
CREATE TABLE contact_log_new (
    phone      TEXT    NOT NULL,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    last_at    INTEGER NOT NULL,
    prev_at    INTEGER NOT NULL DEFAULT 0,
    sent_at    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (phone, account_id)
) WITHOUT ROWID;
INSERT INTO contact_log_new (phone, account_id, last_at, prev_at, sent_at)
    SELECT phone, account_id, last_at, prev_at, sent_at FROM contact_log;
DROP TABLE contact_log;
ALTER TABLE contact_log_new RENAME TO contact_log;
CREATE INDEX contact_log_window ON contact_log (account_id, last_at);
