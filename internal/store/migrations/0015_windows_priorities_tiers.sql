-- Send windows in each recipient's local time (issue 13).
--
-- A campaign's window: minutes after local midnight it opens and closes
-- (window_from > window_to wraps past midnight) and the days it opens
-- (bit 1 << weekday, Sunday = 0); NULL window_from: no window.
-- default_tz is --default-tz, for numbers whose zone is not known.
ALTER TABLE campaigns ADD COLUMN window_from INTEGER;
ALTER TABLE campaigns ADD COLUMN window_to   INTEGER;
ALTER TABLE campaigns ADD COLUMN window_days INTEGER;
ALTER TABLE campaigns ADD COLUMN default_tz  TEXT NOT NULL DEFAULT '';

-- The zones of a recipient, found once at import (the file's tz column,
-- else libphonenumber's zones for the number, else default_tz) and stored
-- as one id per distinct set: a million rows name a few hundred sets.
CREATE TABLE zone_sets (
    id    INTEGER PRIMARY KEY,
    zones TEXT NOT NULL UNIQUE -- IANA names, comma-separated, sorted
);

-- messages.zone_set: the row's zones (NULL: the campaign has no window).
-- window_wait = 1 marks a pending row whose next_attempt_at was moved to
-- its window's next opening by a claim: status counts them apart from
-- rows waiting for a retry. Both are set without rewriting the table.
ALTER TABLE messages ADD COLUMN zone_set    INTEGER;
ALTER TABLE messages ADD COLUMN window_wait INTEGER NOT NULL DEFAULT 0;

-- Priorities between campaigns sharing accounts (issue 13): priority -1
-- low, 0 normal, 1 high — a higher class takes every token while it has
-- rows to send; within a class campaigns share tokens by weight. served is
-- a campaign's tokens taken while competing, divided by its weight (a
-- virtual time: the campaign furthest behind goes next). borrow is how far
-- ahead of an account's bucket a high campaign may go, in nanoseconds of
-- the account's rate (at most its burst).
ALTER TABLE campaigns ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN weight   INTEGER NOT NULL DEFAULT 1;
ALTER TABLE campaigns ADD COLUMN borrow   INTEGER NOT NULL DEFAULT 2000000000;
ALTER TABLE campaigns ADD COLUMN served   REAL    NOT NULL DEFAULT 0;

-- Warm-up (issue 13): accounts with auto_tier on are promoted one tier
-- after promote_after (nanoseconds) in their tier, tier_since, when their
-- record allows, and demoted one tier at once on a restriction or a
-- throttle storm. Accounts from before keep their tier by hand; new ones
-- start with auto_tier on. tier_changes lists every change with its
-- reason (`wasend account history`).
ALTER TABLE accounts ADD COLUMN auto_tier     INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN tier_since    INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN promote_after INTEGER NOT NULL DEFAULT 604800000000000;
UPDATE accounts SET tier_since = created_at;
CREATE TABLE tier_changes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    at         INTEGER NOT NULL,
    from_tier  TEXT    NOT NULL DEFAULT '',
    to_tier    TEXT    NOT NULL,
    reason     TEXT    NOT NULL
);
CREATE INDEX tier_changes_account ON tier_changes (account_id, id);
