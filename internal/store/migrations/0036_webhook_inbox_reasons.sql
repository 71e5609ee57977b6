-- Bodies kept with a reason (not a notification, or a status or event in
-- them that could not apply and was skipped): status counts them and shows
-- the latest without reading the whole inbox.
CREATE INDEX webhook_inbox_kept_with_reason ON webhook_inbox (id) WHERE error IS NOT NULL;
