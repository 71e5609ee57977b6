-- A Cloud API outage seen by a running campaign: since when no account has
-- answered, the last error and the next probe, so `status` can show it.
-- NULL: no outage.

ALTER TABLE campaigns ADD COLUMN outage_since    INTEGER;
ALTER TABLE campaigns ADD COLUMN outage_error    TEXT;
ALTER TABLE campaigns ADD COLUMN outage_probe_at INTEGER;
