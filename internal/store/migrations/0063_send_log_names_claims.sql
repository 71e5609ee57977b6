-- The send log names the claim it logs (issue 25): last_attempt is the
-- attempt of the pair's last claim (claimed at last_at), prev_attempt the
-- one before it (at prev_at). A send the API accepted is read from its
-- attempt (claimsql.LogClaims), so the sent outcome no longer writes the log;
-- a pair's next claim folds its accepted sends into sent_at. The rows from
-- before name none: their sent_at is already right.
ALTER TABLE contact_log ADD COLUMN last_attempt INTEGER;
ALTER TABLE contact_log ADD COLUMN prev_attempt INTEGER;
