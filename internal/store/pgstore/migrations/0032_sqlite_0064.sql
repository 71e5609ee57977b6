-- SQLite's 0064 rewrites its CHECK constraints' IN lists as ORs (SQLite
-- built each list into a temporary table for every row written).
-- Postgres evaluates an IN list of constants in place: nothing to change.
SELECT 1;
