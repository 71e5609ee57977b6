-- Limits shared between hosts through Redis (--limits, issue 14). The
-- rows, attempts and results stay here; these tables hold what the host
-- owes the shared limits and what it is waiting for.
--
-- gate_refunds: refunds (the API proved a message was not accepted) not
-- yet given back to the shared limits, kept until Redis confirms one, so
-- an outcome recorded while Redis is down loses nothing. A refund is
-- applied once by its claim id, so sending one twice is harmless.
CREATE TABLE gate_refunds (
    claim     TEXT PRIMARY KEY,
    portfolio TEXT NOT NULL,
    account   TEXT NOT NULL,
    day       TEXT NOT NULL,
    at        INTEGER NOT NULL
);

-- gate_waits: a campaign whose host cannot ask the shared limits (Redis
-- unreachable, or its state lost) and claims nothing meanwhile; `status`
-- shows it while it is recent (seen: the last claim that found it so). Not
-- a pause: sending resumes by itself, and the first claim admitted clears it.
CREATE TABLE gate_waits (
    campaign_id INTEGER PRIMARY KEY REFERENCES campaigns (id) ON DELETE CASCADE,
    since       INTEGER NOT NULL,
    seen        INTEGER NOT NULL,
    reason      TEXT NOT NULL,
    error       TEXT NOT NULL
);
