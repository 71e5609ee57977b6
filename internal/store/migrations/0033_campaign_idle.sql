-- A campaign whose last claim could send nothing now — its numbers had no
-- token or quota, or their portfolios' windows were full for its
-- recipients — does not compete for the accounts' tokens until idle_until
-- (nanoseconds): the campaigns that can send take its turns meanwhile, and
-- its next claim that sends clears it (issue 23, finding 10).
ALTER TABLE campaigns ADD COLUMN idle_until INTEGER NOT NULL DEFAULT 0;

-- Rows a claim held for a full portfolio window or a capped number
-- (messages.window_wait 2 and 3): a change of accounts, limits or quota
-- that may make room releases them at once.
CREATE INDEX messages_held ON messages (window_wait) WHERE window_wait >= 2;
