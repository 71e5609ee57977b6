-- What the operator manages (issue 10 §2).
--
-- Accounts are removed softly: removed_at is set and the row stays, so the
-- attempts, messages and quota resets that name it keep their account.
-- Removed accounts are neither listed nor used.
ALTER TABLE accounts ADD COLUMN removed_at INTEGER;

-- One phone-number id, one live account: two accounts on one real number
-- would give it two buckets and twice its rate. A database may already
-- hold such pairs, and a migration that failed on them would lock the
-- operator out, so they are let be: every account but the first of a
-- shared number gets its own id in shared_number, which keeps it out of
-- the index's way. Nothing new can join them (the first keeps 0), and an
-- account that moves to another number goes back to 0. `wasend status`
-- and `wasend account list` warn about the pairs that remain.
ALTER TABLE accounts ADD COLUMN shared_number INTEGER NOT NULL DEFAULT 0;
UPDATE accounts SET shared_number = id
    WHERE EXISTS (SELECT 1 FROM accounts o WHERE o.phone_number_id = accounts.phone_number_id AND o.id < accounts.id);
CREATE UNIQUE INDEX accounts_phone_number ON accounts (phone_number_id, shared_number) WHERE removed_at IS NULL;

-- A cancelled campaign is finished for good: its state is 'finished' (so
-- every query that skips finished campaigns skips it) and cancelled_at
-- says it was the operator's decision; its pending rows are never sent.
-- (A new state value would need the table rebuilt for its CHECK.)
ALTER TABLE campaigns ADD COLUMN cancelled_at INTEGER;
