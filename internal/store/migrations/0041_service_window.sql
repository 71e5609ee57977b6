-- The customer service window (issue 27 item 5). service_window = 1: the
-- campaign sends free-form text and its rows are checked again at each
-- claim, a row whose recipient wrote nothing in the last 24 h skipped
-- (campaign.MoveSkipNoWindow); 0: templates, --ignore-window, and every
-- campaign made before the rule.
ALTER TABLE campaigns ADD COLUMN service_window INTEGER NOT NULL DEFAULT 0;
