-- wasend:foreign_keys=off
-- messages loses UNIQUE (campaign_id, phone). Keeping that index up to date
-- cost an import of a million numbers in random order over half its time:
-- every row went to a random place in a big B-tree. The importer now finds
-- duplicates itself, exactly, in memory (see internal/numberset), and no other
-- query looks messages up by number.
--
-- SQLite cannot drop a table constraint, so the table is rebuilt the way
-- its documentation prescribes: with foreign keys off (the migration runner
-- does that for files marked as above), so that dropping the old table
-- does not cascade to attempts, and checked before commit.

CREATE TABLE messages_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign_id     INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    line            INTEGER NOT NULL,
    input           TEXT    NOT NULL,
    phone           TEXT    NOT NULL,
    params          TEXT    NOT NULL DEFAULT '[]',
    body            TEXT    NOT NULL DEFAULT '',
    state           TEXT    NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'unknown')),
    attempts        INTEGER NOT NULL DEFAULT 0, -- requests made
    retries         INTEGER NOT NULL DEFAULT 0, -- transient failures: the retry budget used
    next_attempt_at INTEGER NOT NULL DEFAULT 0,
    account_id      INTEGER REFERENCES accounts(id),
    runner_id       TEXT,
    quota_epoch     INTEGER,
    wamid           TEXT,
    error_code      INTEGER,
    error_message   TEXT,
    updated_at      INTEGER,
    sent_at         INTEGER,
    extras          TEXT    NOT NULL DEFAULT '{}'
);
INSERT INTO messages_new (id, campaign_id, line, input, phone, params, body, state, attempts, retries,
        next_attempt_at, account_id, runner_id, quota_epoch, wamid, error_code, error_message,
        updated_at, sent_at, extras)
    SELECT id, campaign_id, line, input, phone, params, body, state, attempts, retries,
        next_attempt_at, account_id, runner_id, quota_epoch, wamid, error_code, error_message,
        updated_at, sent_at, extras
    FROM messages;
-- AUTOINCREMENT must go on past every id the old table handed out, even
-- those of rows since deleted.
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'messages_new', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'messages_new');
UPDATE sqlite_sequence SET seq = (SELECT max(seq) FROM sqlite_sequence WHERE name IN ('messages', 'messages_new'))
    WHERE name = 'messages_new';
DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;
CREATE INDEX messages_due ON messages (campaign_id, state, next_attempt_at, id);
