-- The sending path keeps the counts of migration 0010 itself, a few
-- statements per transaction, instead of the triggers' several statements
-- per row (issue 15: they were about a third of SQLite's work per message).
--
-- A statement that changes a row's tally (tally = 1 - tally; an insert
-- with tally = 1) says it keeps that row's counts itself: the triggers in
-- internal/store/counts.sql leave such a row alone. Every other statement
-- leaves tally as it is, and the triggers count its rows as before.
ALTER TABLE messages ADD COLUMN tally INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN tally INTEGER NOT NULL DEFAULT 0;

-- The store creates the triggers again, with tally in their conditions,
-- and fills the counts from scratch (ensureCounts) when one is missing.
DROP TRIGGER IF EXISTS message_counts_update;
