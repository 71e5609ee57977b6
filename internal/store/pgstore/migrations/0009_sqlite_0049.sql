-- SQLite's 0049: leases and fences (issue 30). lease_until is a claimed
-- row's lease deadline (0: none), started whether its request may have
-- started (a claim sets 0, the runner 1 before the request); the fence is
-- the claim count (attempts).
ALTER TABLE messages ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN started     BIGINT NOT NULL DEFAULT 1;

CREATE INDEX messages_leases ON messages (runner_id, lease_until) WHERE state = 'sending';
