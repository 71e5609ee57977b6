-- Times are Unix nanoseconds (INTEGER), written from the injected clock.

CREATE TABLE tiers (
    name      TEXT PRIMARY KEY,
    rate      REAL    NOT NULL CHECK (rate > 0),   -- tokens per second
    burst     INTEGER NOT NULL CHECK (burst >= 1),
    daily_cap INTEGER NOT NULL CHECK (daily_cap >= 0)
);
INSERT INTO tiers (name, rate, burst, daily_cap) VALUES
    ('new',    1.0/12, 5,  50),
    ('warm',   1.0/8,  8,  150),
    ('active', 1.0/5,  15, 300);

-- An account is a business phone number. Its token bucket and daily quota
-- live here so every wasend process on this database shares them.
CREATE TABLE accounts (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT    NOT NULL UNIQUE,
    phone_number_id TEXT    NOT NULL,
    tier            TEXT    NOT NULL REFERENCES tiers(name),
    token_env       TEXT    NOT NULL,          -- the variable's name, never its value
    rate            REAL,                      -- overrides; NULL = tier's
    burst           INTEGER,
    daily_cap       INTEGER,
    disabled        INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    tokens          REAL    NOT NULL,
    tokens_at       INTEGER NOT NULL,
    quota_day       TEXT    NOT NULL,          -- calendar day of the last reset
    quota_epoch     INTEGER NOT NULL DEFAULT 0, -- bumped by every reset
    used_today      INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE global_limit (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    enabled   INTEGER NOT NULL DEFAULT 0,
    rate      REAL    NOT NULL DEFAULT 1,
    burst     INTEGER NOT NULL DEFAULT 1,
    tokens    REAL    NOT NULL DEFAULT 1,
    tokens_at INTEGER NOT NULL DEFAULT 0
);
INSERT INTO global_limit (id) VALUES (1);

CREATE TABLE campaigns (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT    NOT NULL,
    fingerprint  TEXT    NOT NULL UNIQUE,
    source       TEXT    NOT NULL,
    kind         TEXT    NOT NULL CHECK (kind IN ('template', 'text')),
    template     TEXT    NOT NULL DEFAULT '',
    lang         TEXT    NOT NULL DEFAULT '',
    params       TEXT    NOT NULL DEFAULT '[]', -- JSON array of column names
    text         TEXT    NOT NULL DEFAULT '',
    state        TEXT    NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'paused', 'finished')),
    pause_reason TEXT    NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    finished_at  INTEGER,
    imported     INTEGER NOT NULL DEFAULT 0,
    skipped      INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE messages (
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
    UNIQUE (campaign_id, phone)
);
CREATE INDEX messages_due ON messages (campaign_id, state, next_attempt_at, id);

-- Rows of a file that were not imported, with the reason.
CREATE TABLE skipped (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    line        INTEGER NOT NULL,
    input       TEXT    NOT NULL,
    reason      TEXT    NOT NULL
);
CREATE INDEX skipped_campaign ON skipped (campaign_id, line);

-- One row per request made: what spent a token, when, with what result.
CREATE TABLE attempts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    claimed_at INTEGER NOT NULL,
    done_at    INTEGER,
    outcome    TEXT,
    error_code INTEGER
);
CREATE INDEX attempts_account ON attempts (account_id, claimed_at);

-- Live sender processes. A row in state 'sending' whose runner is gone may
-- have reached the API: it becomes 'unknown' and is not resent blindly.
CREATE TABLE runners (
    id           TEXT    PRIMARY KEY,
    campaign_id  INTEGER NOT NULL,
    host         TEXT    NOT NULL,
    pid          INTEGER NOT NULL,
    started_at   INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL
);

CREATE TABLE suppressions (
    phone      TEXT PRIMARY KEY,
    reason     TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
);

CREATE TABLE quota_resets (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    day        TEXT    NOT NULL,
    at         INTEGER NOT NULL,
    forced     INTEGER NOT NULL DEFAULT 0
);
