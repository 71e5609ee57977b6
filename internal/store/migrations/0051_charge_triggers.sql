-- The charge triggers (migration 0050, internal/store/counts.sql) cost
-- ~1 ms of CPU per status kept, growing with the batch: 85 % of the webhook
-- receiver's CPU at thousands of posts a second (issue 25). Two causes:
--
-- - message_charge_now's pricing subqueries (the latest status with
--   pricing: ORDER BY at DESC, status LIMIT 1) sorted a message's statuses
--   in a temporary b-tree, three times a status. An index in that order
--   reads the first one instead; it replaces the index on message_id
--   alone, which its first column serves as well.
-- - the triggers matched the message's old charge with IN (SELECT …), a
--   temporary index each time; counts.sql now says = (SELECT …) (one row
--   at most). Dropping one of the triggers makes the next open fill the
--   kept counts from scratch and create every trigger of counts.sql anew
--   (ensureCounts).
DROP INDEX message_statuses_message;
CREATE INDEX message_statuses_message ON message_statuses (message_id, at DESC, status);

DROP TRIGGER IF EXISTS charge_counts_insert;
