-- SQLite's 0058: messages_phone_sent holds the rows that made a request
-- (attempts > 0), not those sending or sent, so an outcome leaves it alone.
DROP INDEX messages_phone_sent;
CREATE INDEX messages_phone_sent ON messages (phone) WHERE attempts > 0;
