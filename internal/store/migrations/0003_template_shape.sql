-- Template shapes beyond positional body parameters. campaigns.shape holds
-- the spec's named-parameter flag, header and URL buttons as JSON; a
-- message's extras hold its header and button values. '{}' is a campaign or
-- row from before, with none of them.

ALTER TABLE campaigns ADD COLUMN shape  TEXT NOT NULL DEFAULT '{}';
ALTER TABLE messages  ADD COLUMN extras TEXT NOT NULL DEFAULT '{}';
