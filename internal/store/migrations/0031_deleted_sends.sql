-- Whom deleted campaigns messaged (issue 23, finding 7). Deleting a
-- campaign deletes its rows, but not the fact that it messaged people:
-- the repeat guard (the same template within 24 h) and
-- --skip-contacted-within read this log as they read the rows of the
-- campaigns that remain. (The portfolio's reach reads contact_log, which
-- no campaign owns.) One row per recipient and template, the latest send;
-- template is '' for a text message. campaign_id names the deleted
-- campaign in a skip's reason; it points at nothing.
CREATE TABLE deleted_sends (
    phone       TEXT    NOT NULL,
    template    TEXT    NOT NULL,
    campaign_id INTEGER NOT NULL,
    sent_at     INTEGER NOT NULL,
    PRIMARY KEY (phone, template)
) WITHOUT ROWID;
CREATE INDEX deleted_sends_at ON deleted_sends (sent_at);
