-- The refund of a claim that lapsed (0055's trigger) is queued by the
-- lease's expiry itself (expireLeases, claimsql.QueueLapseRefunds), with
-- the claim id built by the one function that builds it for the gate
-- (campaign.SharedClaimID): the id's format is written once, in Go.
DROP TRIGGER IF EXISTS gate_refunds_not_sent;
