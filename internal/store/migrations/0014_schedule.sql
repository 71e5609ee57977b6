-- Scheduled start and validity (issue 13).
--
-- start_at: `--at`, the campaign is not claimed before it (NULL: at once).
-- began_at: the first claim at or after start_at; with expire_after (in
-- nanoseconds, 0: never) it says when rows still pending expire.
ALTER TABLE campaigns ADD COLUMN start_at     INTEGER;
ALTER TABLE campaigns ADD COLUMN began_at     INTEGER;
ALTER TABLE campaigns ADD COLUMN expire_after INTEGER NOT NULL DEFAULT 0;

-- messages.state gains 'expired': a final state for rows not sent within
-- expire_after of the campaign's start. Rebuilding messages for a wider
-- CHECK would copy a million rows and must name every column other
-- migrations have added; SQLite documents widening a CHECK in place
-- instead (its ALTER TABLE page, "making other kinds of table schema
-- changes"): the stored rows are valid either way. The store
-- bumps the schema version and checks the edit took (store.editSchema).
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
    SET sql = replace(sql, '''sent'', ''failed'', ''unknown'')', '''sent'', ''failed'', ''unknown'', ''expired'')')
    WHERE type = 'table' AND name = 'messages';
PRAGMA writable_schema = OFF;
