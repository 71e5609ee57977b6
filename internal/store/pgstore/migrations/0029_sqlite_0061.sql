-- SQLite's 0061 keeps the rows in flight and sent out of messages_due (a
-- partial index) and adds messages_campaign, so that a claim and a sent
-- outcome no longer move the row's entry. Postgres's planner takes its
-- partial indexes by its own rules and its claims are pgstore's: nothing
-- to change here (the difference is listed in parity_test.go).
SELECT 1;
