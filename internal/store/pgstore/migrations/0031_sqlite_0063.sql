-- SQLite's 0063: the send log names the attempts of the claims it logs
-- (last_attempt, prev_attempt); the sent outcome no longer writes it
-- (claimsql.LogClaims).
ALTER TABLE contact_log ADD COLUMN last_attempt BIGINT;
ALTER TABLE contact_log ADD COLUMN prev_attempt BIGINT;
