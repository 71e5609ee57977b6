-- Account health: cool-downs after throttling, an adaptive rate factor, long
-- restrictions (spam limits), and accounts dropped from one campaign after
-- an account-fatal error. Attempts keep the classifier's verdict for stats.

ALTER TABLE accounts ADD COLUMN cooldown_until   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN throttle_streak  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN last_throttle_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN rate_factor      REAL    NOT NULL DEFAULT 1; -- effective rate = rate × factor
ALTER TABLE accounts ADD COLUMN rate_factor_at   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN restriction      TEXT    NOT NULL DEFAULT ''; -- why it is stopped until cooldown_until
ALTER TABLE accounts ADD COLUMN last_error_code  INTEGER;

ALTER TABLE attempts ADD COLUMN class TEXT;
CREATE INDEX attempts_message ON attempts (message_id);

CREATE TABLE campaign_accounts (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    reason      TEXT    NOT NULL,
    error_code  INTEGER,
    at          INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, account_id)
);
