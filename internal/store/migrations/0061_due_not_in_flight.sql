-- messages_due holds the rows a claim, a retry or an operator reads by
-- campaign and state (pending, failed, unknown, expired), no longer the
-- rows in flight and sent: a claim deleted and re-inserted a row's entry
-- (pending -> sending) and its outcome did again (sending -> sent), four
-- B-tree changes a message; now a claim deletes one and a sent outcome
-- none. A query names one state with `=` (SQLite uses a partial index
-- when the query's terms imply its WHERE, which an OR of equalities
-- allows and an IN list does not). Rows sending are found through
-- messages_leases (`+campaign_id`, so the planner does not prefer the
-- campaign's index), rows sent and lists of states through
-- messages_campaign, which also serves the cascade of a campaign's
-- deletion.
DROP INDEX messages_due;
CREATE INDEX messages_due ON messages (campaign_id, state, next_attempt_at, id)
    WHERE state = 'pending' OR state = 'failed' OR state = 'unknown' OR state = 'expired';
CREATE INDEX messages_campaign ON messages (campaign_id);
