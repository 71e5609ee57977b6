-- Meta's per-number limits (issue 12): throughput, pair spacing, the
-- sticky sender.

-- Throughput in messages per second: what the Graph API said
-- (throughput.level: STANDARD 80, HIGH 1000; NULL: never read, 80 is
-- assumed), and the operator's `account set --throughput` (-1: unlimited;
-- NULL: none), which wins. The account's rate and burst never exceed it.
ALTER TABLE accounts ADD COLUMN throughput_read   REAL;
ALTER TABLE accounts ADD COLUMN throughput_pinned REAL;

-- Two messages to one person from any of our numbers are at least this far
-- apart, in nanoseconds: `campaign run --pair-gap` (6 s unless told) sets
-- it for the run.
ALTER TABLE campaigns ADD COLUMN pair_gap INTEGER NOT NULL DEFAULT 0;

-- How often a recipient could not get the number that messaged them within
-- 30 days, and why (the number disabled, restricted, dropped or removed).
CREATE TABLE sticky_breaks (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    reason      TEXT    NOT NULL,
    n           INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (campaign_id, reason)
);

-- What `wasend account sync` and the run's preflight last read of the
-- number (GET /{phone-number-id}): the portfolio's messaging limit
-- (distinct recipients in 24 h; -1 unlimited; NULL never read), quality,
-- name and when. The limit that applies to a portfolio is the lower of
-- its pinned one and the latest read by any of its numbers.
ALTER TABLE accounts ADD COLUMN messaging_limit_read INTEGER;
ALTER TABLE accounts ADD COLUMN quality_rating TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN verified_name  TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN name_status    TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN synced_at      INTEGER;

-- Message templates as `wasend template sync` read them from a WhatsApp
-- Business Account; check, plan and run validate a campaign against them.
CREATE TABLE templates (
    waba_id          TEXT    NOT NULL,
    name             TEXT    NOT NULL,
    language         TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    category         TEXT    NOT NULL DEFAULT '',
    parameter_format TEXT    NOT NULL DEFAULT '',
    components       TEXT    NOT NULL DEFAULT '[]',
    synced_at        INTEGER NOT NULL,
    PRIMARY KEY (waba_id, name, language)
);
