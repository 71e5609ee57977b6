-- Where a runner's pid means something (issue 26): its machine's boot and
-- pid namespace. A reader in the same space can tell at once that the
-- process is gone; elsewhere only the heartbeat can ('' before this).
ALTER TABLE runners ADD COLUMN pid_space TEXT NOT NULL DEFAULT '';

-- The preflight's last finding on an account that failed it (a refused or
-- expired token, a number the token does not reach): the Graph code, the
-- API's message (never the token) and when. A check that passes clears it.
ALTER TABLE accounts ADD COLUMN check_error TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN check_code  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN checked_at  INTEGER NOT NULL DEFAULT 0;
