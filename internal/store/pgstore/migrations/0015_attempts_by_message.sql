-- 0015: a message's attempts indexed in id order. attempt_rollup_insert
-- (0011) reads, for each new attempt, the one before it of its message
-- (and of its message and account): id < n.id ORDER BY id DESC LIMIT 1.
-- On message_id alone the planner, without statistics of attempts (a new
-- database: autovacuum had not analyzed it yet), walked attempts_pkey
-- backwards, or attempts_account, filtering message_id: every attempt
-- read every one before it, and a run of 20,000 rows cost the server
-- seconds more in that trigger than in everything else (bench/claims-pg.sh
-- prints the index reads). SQLite's index on message_id holds the rowid
-- (id) after it, so this is the same index there.
DROP INDEX attempts_message;
CREATE INDEX attempts_message ON attempts (message_id, id);
