-- SQLite's 0063: the send log names the attempts of the claims it logs
-- (last_attempt, prev_attempt); the sent outcome no longer writes it
-- (claimsql.LogClaims).
ALTER TABLE contact_log ADD COLUMN last_attempt BIGINT;
ALTER TABLE contact_log ADD COLUMN prev_attempt BIGINT;
UPDATE contact_log SET last_attempt = a.id
    FROM attempts a JOIN messages m ON m.id = a.message_id
    WHERE a.done_at IS NULL AND contact_log.account_id = a.account_id AND contact_log.phone = m.phone
        AND contact_log.last_at = a.claimed_at;
