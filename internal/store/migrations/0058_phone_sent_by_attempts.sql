-- Rows a recipient's answer may belong to (SentTo: sending or sent), found
-- by phone through rows that made a request (attempts > 0) rather than by
-- state: the state changes at every outcome, attempts only at a claim, so
-- recording a send no longer deletes and re-inserts the row's entry here.
DROP INDEX messages_phone_sent;
CREATE INDEX messages_phone_sent ON messages (phone) WHERE attempts > 0;
