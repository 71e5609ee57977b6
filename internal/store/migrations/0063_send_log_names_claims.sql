-- The send log names the claim it logs (issue 25): last_msg is the message
-- of the pair's last claim (its attempt: that message, that account,
-- claimed_at = last_at), prev_msg the one before it (at prev_at) while
-- that one was not accepted yet. A send the API accepted is read from its
-- attempt (claimsql.SentAt), so the sent outcome no longer writes the log;
-- a pair's next claim folds its last accepted send into sent_at. The rows
-- from before name none: their sent_at is already right.
ALTER TABLE contact_log ADD COLUMN last_msg INTEGER;
ALTER TABLE contact_log ADD COLUMN prev_msg INTEGER;
