-- Warm-up's requests by quota day counted as rows move (issue 25): the tier
-- progress status shows read every attempt since each auto-tier account's
-- tier change into Go to group by quota day (630 of status's 760 ms at 250k
-- recent attempts). attempt_rollup already keeps requests and sent answers
-- per campaign, account and minute; tier_minutes keeps, on the same key,
-- what it lacks and is rarely nonzero: the claims put back without a
-- request (class not-sent, no request, and how many of them say sent), and
-- among real requests the permanent failures and the restrictions
-- (131048, 131064). A minute only ever holds a row when one is nonzero.
--
-- The triggers in internal/store/tier_counts.sql keep it; the store fills
-- it from the attempts and creates them whenever one is missing: on the
-- first open after this migration, and after a migration that rebuilds
-- attempts (dropping a table drops its triggers).
CREATE TABLE tier_minutes (
    campaign_id   INTEGER NOT NULL,
    account_id    INTEGER NOT NULL,
    minute        INTEGER NOT NULL, -- claimed_at / 60e9, as attempt_rollup
    not_sent      INTEGER NOT NULL,
    not_sent_sent INTEGER NOT NULL,
    failed        INTEGER NOT NULL,
    restricted    INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, account_id, minute)
) WITHOUT ROWID;
CREATE INDEX tier_minutes_account ON tier_minutes (account_id, minute);

-- campaign show's rows put back with an error code, and its failed status
-- webhooks, read through partial indexes that hold only those: the reads
-- passed over every pending row of the campaign (794k of a 1M campaign
-- after 206k sent) or probed the statuses of each of its messages.
CREATE INDEX messages_put_back ON messages (campaign_id, error_code) WHERE state = 'pending' AND error_code IS NOT NULL;
CREATE INDEX message_statuses_failed ON message_statuses (message_id) WHERE status = 'failed';
