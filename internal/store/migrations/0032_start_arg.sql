-- start_arg is --at as given ("+2h"): a run of the same command again, with
-- the same relative --at, keeps the start it set (and so the validity's
-- deadline, migration 0030) instead of moving it. '': not known.
ALTER TABLE campaigns ADD COLUMN start_arg TEXT NOT NULL DEFAULT '';
