-- Counts kept as rows move, so that status, campaign list and campaign show
-- read a few hundred rows instead of scanning a campaign's messages and
-- attempts (a million rows took seconds).
--
-- The tables are filled in, and then kept, by the triggers in
-- internal/store/counts.sql, which the store creates (and fills the tables
-- from scratch) whenever one of them is missing: on the first open after
-- this migration, and after any later migration that rebuilds messages or
-- attempts and so drops their triggers.

-- message_counts: a campaign's messages by state and by the account that
-- made the last request (0 for none yet).
CREATE TABLE message_counts (
    campaign_id INTEGER NOT NULL,
    account_id  INTEGER NOT NULL,
    state       TEXT    NOT NULL,
    n           INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, state, account_id)
) WITHOUT ROWID;

-- attempt_rollup: requests by campaign, account and minute claimed (Unix
-- nanoseconds / 60e9): how many, how many throttled and sent, the first and
-- last claim and the last answer. Health figures over a window sum the
-- minutes in it.
CREATE TABLE attempt_rollup (
    campaign_id INTEGER NOT NULL,
    account_id  INTEGER NOT NULL,
    minute      INTEGER NOT NULL,
    attempts    INTEGER NOT NULL,
    throttled   INTEGER NOT NULL,
    sent        INTEGER NOT NULL,
    first_at    INTEGER NOT NULL, -- min(claimed_at)
    last_at     INTEGER NOT NULL, -- max(claimed_at)
    done_at     INTEGER NOT NULL, -- max(coalesce(done_at, claimed_at))
    PRIMARY KEY (campaign_id, account_id, minute)
) WITHOUT ROWID;
CREATE INDEX attempt_rollup_minute ON attempt_rollup (minute);

-- attempt_firsts: distinct messages tried in a window, counted exactly (to
-- the minute) without reading attempts: each request is filed under its
-- minute and the minute of the message's previous request, by any account
-- (prev_any) and by the same account (prev_account), -1 for none. A
-- message counts once in a window starting at minute S: for the request in
-- the window whose previous one is before S.
CREATE TABLE attempt_firsts (
    campaign_id  INTEGER NOT NULL,
    account_id   INTEGER NOT NULL,
    minute       INTEGER NOT NULL,
    prev_any     INTEGER NOT NULL,
    prev_account INTEGER NOT NULL,
    n            INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, account_id, minute, prev_any, prev_account)
) WITHOUT ROWID;
