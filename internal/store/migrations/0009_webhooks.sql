-- Delivery webhooks (issue 11).
--
-- webhook_inbox keeps every signed POST body exactly as it came, before
-- anything reads it: the receiver answers Meta as soon as the body is on
-- disk, and an applier drains the inbox apart from the HTTP handler.
CREATE TABLE webhook_inbox (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at INTEGER NOT NULL,
    body        BLOB    NOT NULL,
    applied_at  INTEGER,            -- NULL until applied
    error       TEXT                -- why a body could not be read, once applied
);
CREATE INDEX webhook_inbox_unapplied ON webhook_inbox (id) WHERE applied_at IS NULL;

-- Every status Meta reported, once per (wamid, status): a duplicate delivery
-- or a retried body inserts nothing. message_id is the row it was matched
-- to (NULL: a message wasend never sent). applied = 0 marks a status whose
-- row was still in flight when it came; the applier settles it once the
-- sender has recorded its answer.
CREATE TABLE message_statuses (
    wamid         TEXT    NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN ('sent', 'delivered', 'read', 'failed')),
    at            INTEGER NOT NULL, -- the webhook's own timestamp
    message_id    INTEGER REFERENCES messages(id) ON DELETE CASCADE,
    recipient     TEXT    NOT NULL DEFAULT '',
    callback_data TEXT    NOT NULL DEFAULT '',
    error_code    INTEGER,
    error_title   TEXT,
    pricing       TEXT    NOT NULL DEFAULT '', -- pricing category
    received_at   INTEGER NOT NULL,
    applied       INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (wamid, status)
);
CREATE INDEX message_statuses_message ON message_statuses (message_id);
CREATE INDEX message_statuses_deferred ON message_statuses (message_id) WHERE applied = 0;

-- What Meta says became of a sent message, beside its sending state: NULL
-- (no webhook yet), then only forward: sent < delivered < read; failed is
-- final. delivered_at and read_at are the webhook timestamps (a read
-- implies a delivery, so it sets delivered_at when no delivered came).
ALTER TABLE messages ADD COLUMN delivery     TEXT CHECK (delivery IN ('sent', 'delivered', 'read', 'failed'));
ALTER TABLE messages ADD COLUMN delivered_at INTEGER;
ALTER TABLE messages ADD COLUMN read_at      INTEGER;
ALTER TABLE messages ADD COLUMN failed_after_send INTEGER NOT NULL DEFAULT 0; -- failed by a status webhook

-- Business numbers as status webhooks name them (metadata): quality and
-- account updates give only the display number.
CREATE TABLE webhook_numbers (
    display_number  TEXT PRIMARY KEY,
    phone_number_id TEXT    NOT NULL,
    seen_at         INTEGER NOT NULL
);

-- What status webhooks said, counted by campaign and account (0: none),
-- kept as rows move by the triggers of internal/store/counts.sql, so that
-- status never reads a campaign's messages for it. reported: rows with a
-- delivery state; failed_after_send: rows a failed status failed.
CREATE TABLE delivery_counts (
    campaign_id       INTEGER NOT NULL,
    account_id        INTEGER NOT NULL,
    reported          INTEGER NOT NULL,
    delivered         INTEGER NOT NULL, -- delivered or read
    read              INTEGER NOT NULL,
    failed_after_send INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, account_id)
) WITHOUT ROWID;

CREATE INDEX messages_wamid ON messages (wamid) WHERE wamid IS NOT NULL;
