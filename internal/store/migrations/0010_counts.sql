-- Counts kept as rows move, so that status, campaign list and campaign show
-- read a few hundred rows instead of scanning a campaign's messages and
-- attempts (a million rows took seconds).
--
-- Everything here but the import's count is kept by triggers: a trigger
-- runs inside the statement that fires it, so a count changes in the same
-- transaction as the row it counts, whichever code moved the row.
-- Deleting a campaign deletes its counts and rollups (messages and
-- attempts are only ever deleted with their campaign).

-- message_counts: a campaign's messages by state and by the account that
-- made the last request (0 for none yet).
CREATE TABLE message_counts (
    campaign_id INTEGER NOT NULL,
    account_id  INTEGER NOT NULL,
    state       TEXT    NOT NULL,
    n           INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, state, account_id)
) WITHOUT ROWID;

INSERT INTO message_counts (campaign_id, account_id, state, n)
    SELECT campaign_id, coalesce(account_id, 0), state, count(*) FROM messages GROUP BY 1, 2, 3;

-- Messages are inserted by the import alone, which adds its count in one
-- statement before it commits (Importer.Commit): a trigger per row would
-- cost a million upserts on a million-row import.

CREATE TRIGGER message_counts_update AFTER UPDATE OF state, account_id ON messages
    WHEN OLD.state IS NOT NEW.state OR OLD.account_id IS NOT NEW.account_id BEGIN
    UPDATE message_counts SET n = n - 1
        WHERE campaign_id = OLD.campaign_id AND state = OLD.state AND account_id = coalesce(OLD.account_id, 0);
    INSERT INTO message_counts (campaign_id, account_id, state, n)
        VALUES (NEW.campaign_id, coalesce(NEW.account_id, 0), NEW.state, 1)
        ON CONFLICT DO UPDATE SET n = n + 1;
END;

-- A decrement never creates a row: when a campaign is deleted its counts go
-- first or its messages do, and either order leaves nothing behind.
CREATE TRIGGER message_counts_delete AFTER DELETE ON messages BEGIN
    UPDATE message_counts SET n = n - 1
        WHERE campaign_id = OLD.campaign_id AND state = OLD.state AND account_id = coalesce(OLD.account_id, 0);
END;

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

INSERT INTO attempt_rollup (campaign_id, account_id, minute, attempts, throttled, sent, first_at, last_at, done_at)
    SELECT m.campaign_id, t.account_id, t.claimed_at / 60000000000, count(*),
        count(CASE WHEN t.class IN ('throttled', 'pair-throttled') THEN 1 END),
        count(CASE WHEN t.outcome = 'sent' THEN 1 END),
        min(t.claimed_at), max(t.claimed_at), max(coalesce(t.done_at, t.claimed_at))
    FROM attempts t JOIN messages m ON m.id = t.message_id
    GROUP BY 1, 2, 3;

INSERT INTO attempt_firsts (campaign_id, account_id, minute, prev_any, prev_account, n)
    SELECT campaign_id, account_id, minute, prev_any, prev_account, count(*) FROM (
        SELECT m.campaign_id, t.account_id, t.claimed_at / 60000000000 AS minute,
            coalesce(lag(t.claimed_at) OVER (PARTITION BY t.message_id ORDER BY t.id) / 60000000000, -1) AS prev_any,
            coalesce(lag(t.claimed_at) OVER (PARTITION BY t.message_id, t.account_id ORDER BY t.id) / 60000000000, -1) AS prev_account
        FROM attempts t JOIN messages m ON m.id = t.message_id)
    GROUP BY 1, 2, 3, 4, 5;

CREATE TRIGGER attempt_rollup_insert AFTER INSERT ON attempts BEGIN
    INSERT INTO attempt_rollup (campaign_id, account_id, minute, attempts, throttled, sent, first_at, last_at, done_at)
        VALUES ((SELECT campaign_id FROM messages WHERE id = NEW.message_id), NEW.account_id,
            NEW.claimed_at / 60000000000, 1,
            NEW.class IS NOT NULL AND NEW.class IN ('throttled', 'pair-throttled'), NEW.outcome IS 'sent',
            NEW.claimed_at, NEW.claimed_at, coalesce(NEW.done_at, NEW.claimed_at))
        ON CONFLICT DO UPDATE SET attempts = attempts + 1, throttled = throttled + excluded.throttled,
            sent = sent + excluded.sent, first_at = min(first_at, excluded.first_at),
            last_at = max(last_at, excluded.last_at), done_at = max(done_at, excluded.done_at);
    INSERT INTO attempt_firsts (campaign_id, account_id, minute, prev_any, prev_account, n)
        VALUES ((SELECT campaign_id FROM messages WHERE id = NEW.message_id), NEW.account_id,
            NEW.claimed_at / 60000000000,
            coalesce((SELECT claimed_at FROM attempts WHERE message_id = NEW.message_id AND id < NEW.id
                ORDER BY id DESC LIMIT 1) / 60000000000, -1),
            coalesce((SELECT claimed_at FROM attempts WHERE message_id = NEW.message_id AND account_id = NEW.account_id
                AND id < NEW.id ORDER BY id DESC LIMIT 1) / 60000000000, -1),
            1)
        ON CONFLICT DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER attempt_rollup_update AFTER UPDATE OF outcome, class, done_at ON attempts BEGIN
    UPDATE attempt_rollup SET
        throttled = throttled + (NEW.class IS NOT NULL AND NEW.class IN ('throttled', 'pair-throttled'))
            - (OLD.class IS NOT NULL AND OLD.class IN ('throttled', 'pair-throttled')),
        sent = sent + (NEW.outcome IS 'sent') - (OLD.outcome IS 'sent'),
        done_at = max(done_at, coalesce(NEW.done_at, NEW.claimed_at))
        WHERE campaign_id = (SELECT campaign_id FROM messages WHERE id = NEW.message_id)
            AND account_id = NEW.account_id AND minute = NEW.claimed_at / 60000000000;
END;

CREATE TRIGGER campaign_counts_delete AFTER DELETE ON campaigns BEGIN
    DELETE FROM message_counts WHERE campaign_id = OLD.id;
    DELETE FROM attempt_rollup WHERE campaign_id = OLD.id;
    DELETE FROM attempt_firsts WHERE campaign_id = OLD.id;
END;
