-- SQLite's 0063: the send log names the claims it logs (last_msg,
-- prev_msg); the sent outcome no longer writes it (claimsql.SentAt).
ALTER TABLE contact_log ADD COLUMN last_msg BIGINT;
ALTER TABLE contact_log ADD COLUMN prev_msg BIGINT;
