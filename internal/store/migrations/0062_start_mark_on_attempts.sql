-- The start mark (whether a claim's request may have started) moves from
-- messages.started to the claim's attempt: marking it rewrote the wide
-- messages row, and fired its three count triggers, once more a message;
-- an attempt's triggers watch other columns. A claim inserts its attempt
-- with 0 and the runner sets 1 just before the request; every other
-- attempt counts as started (never resent blindly). A row's claim is its
-- latest attempt (statesql.Started): a row in flight keeps the mark it had.
ALTER TABLE attempts ADD COLUMN started INTEGER NOT NULL DEFAULT 1;
UPDATE attempts SET started = 0 WHERE id IN (
    SELECT (SELECT max(a.id) FROM attempts AS a WHERE a.message_id = m.id)
    FROM messages AS m WHERE m.state = 'sending' AND m.started = 0);
ALTER TABLE messages DROP COLUMN started;
