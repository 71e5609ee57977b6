-- A campaign is found again by its message and its recipients, not by the
-- bytes of its file (issue 10). source_key is the old fingerprint (file
-- bytes, message and read flags): a shortcut that resumes an unchanged
-- command without reading the file again. recipients_key identifies the
-- set of distinct valid numbers of the file last imported into the
-- campaign (internal/screen.RecipientKey); '' for campaigns imported before
-- this migration, whose key is computed from their messages when needed.
-- fingerprint stays unique per campaign and is no longer looked up.
ALTER TABLE campaigns ADD COLUMN source_key TEXT NOT NULL DEFAULT '';
ALTER TABLE campaigns ADD COLUMN recipients_key TEXT NOT NULL DEFAULT '';
UPDATE campaigns SET source_key = fingerprint;
CREATE INDEX campaigns_source ON campaigns (source_key);
