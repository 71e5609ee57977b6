-- The triggers that tested a row's state against a list of three or four
-- constants (cost_counts_update, cost_counts_delete, messages_spend) made
-- SQLite build a temporary index for the list at every row they fired
-- for: cost_counts_update fires at every claim and every outcome, ~8 µs
-- each. They are written again without such lists: the count triggers
-- when the store opens (ensureCounts: any missing, all made again, their
-- counts recounted), the budget's at the next run with a budget
-- (SetBudget, which recounts what is committed).
DROP TRIGGER IF EXISTS cost_counts_update;
DROP TRIGGER IF EXISTS cost_counts_delete;
DROP TRIGGER IF EXISTS messages_spend;
