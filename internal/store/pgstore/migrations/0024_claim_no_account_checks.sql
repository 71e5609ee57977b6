-- The claim path writes three rows a message naming an account: the
-- message's (the claim sets account_id), its attempt, its send log row.
-- Each foreign key to accounts made each a check (a statement run by a
-- trigger, under the claim lock): three of the four checks, and of the 5.5
-- statements, a message cost (the fourth: attempts' key to messages, whose
-- cascade deletes a campaign's attempts, kept). They guarded nothing the store's own rules do not: an
-- account's row is never deleted (removing one renames it and marks it
-- removed_at, managesql's removeAccount), so no reference to it dangles and
-- the cascades (contact_log's) never ran; and every claim names accounts it
-- read, locked FOR UPDATE, in its own transaction (claimTx.Accounts).
-- SQLite keeps its keys (checked in-process, no statement each).
ALTER TABLE messages DROP CONSTRAINT messages_account_id_fkey;
ALTER TABLE attempts DROP CONSTRAINT attempts_account_id_fkey;
ALTER TABLE contact_log DROP CONSTRAINT contact_log_account_id_fkey;
