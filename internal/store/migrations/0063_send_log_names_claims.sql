-- The send log names the claim it logs (issue 25): last_attempt is the
-- attempt of the pair's last claim (claimed at last_at), prev_attempt the
-- one before it (at prev_at). A send the API accepted is read from its
-- attempt (claimsql.LogClaims), so the sent outcome no longer writes the log;
-- a pair's next claim folds its accepted sends into sent_at. The rows from
-- before name none: their sent_at is already right.
ALTER TABLE contact_log ADD COLUMN last_attempt INTEGER;
ALTER TABLE contact_log ADD COLUMN prev_attempt INTEGER;
-- A claim still in flight names its attempt, so that its answer, recorded
-- by this version, still binds its recipient.
UPDATE contact_log SET last_attempt = a.id
    FROM attempts a JOIN messages m ON m.id = a.message_id
    WHERE a.done_at IS NULL AND contact_log.account_id = a.account_id AND contact_log.phone = m.phone
        AND contact_log.last_at = a.claimed_at;
