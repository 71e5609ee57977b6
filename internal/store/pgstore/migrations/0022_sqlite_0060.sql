-- SQLite's 0060: the refund of a claim that lapsed is queued by
-- expireLeases (claimsql.QueueLapseRefunds), its claim id built in Go.
DROP TRIGGER IF EXISTS gate_refunds_not_sent ON attempts;
DROP FUNCTION IF EXISTS gate_refunds_not_sent();
