-- Leases and fences (issue 30): a claimed row carries its runner
-- (runner_id), a lease deadline and a fence. lease_until is the deadline
-- (nanoseconds; 0: none, so a row in flight from before this migration is
-- taken back at the next rescue); heartbeats extend it. started says
-- whether the row's request may have started: a claim sets 0 and the
-- runner sets 1 just before the request, so the end of a lease puts back a
-- row never sent and makes unknown one that may have been. It is 1 for
-- every row put in flight any other way: never resent blindly. The fence
-- is the claim count every claim raises (attempts).
ALTER TABLE messages ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN started INTEGER NOT NULL DEFAULT 1;

-- A runner's rows in flight, for its heartbeat and for the rescuer.
CREATE INDEX messages_leases ON messages (runner_id, lease_until) WHERE state = 'sending';
