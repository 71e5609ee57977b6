-- SQLite's 0062: the start mark moves from messages.started to the
-- claim's attempt (its latest), a row in flight keeping its mark.
ALTER TABLE attempts ADD COLUMN started BIGINT NOT NULL DEFAULT 1;
UPDATE attempts SET started = 0 WHERE id IN (
    SELECT (SELECT max(a.id) FROM attempts AS a WHERE a.message_id = m.id)
    FROM messages AS m WHERE m.state = 'sending' AND m.started = 0);
ALTER TABLE messages DROP COLUMN started;
