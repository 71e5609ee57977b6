-- What the claim reads beyond SQLite's schema as 0001 took it: whether a
-- campaign's rows need an open customer service window (SQLite's 0041).
-- IF NOT EXISTS: 0006, which ports 0041 with the rest of SQLite's newer
-- tables, may have added it already.
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS service_window BIGINT NOT NULL DEFAULT 0;
