-- SQLite's 0051: a message's statuses indexed in the order
-- message_charge_now reads the latest one with pricing (at DESC, then the
-- status's bytes), replacing the index on message_id alone. Postgres's
-- charge triggers are its own (0010) and did not build temporary indexes.
DROP INDEX message_statuses_message;
CREATE INDEX message_statuses_message ON message_statuses (message_id, at DESC, status COLLATE "C");
