-- Suppressions this host made itself and has not yet put on the list
-- several hosts share through Redis (under --limits): the outbox a sender's
-- sync loop empties (internal/limits/hostsync), so a number that opted out
-- through one host (error 131050, from an answer or a status webhook) is
-- not messaged by the others.
--
-- Every number newly listed here goes in by the trigger, whoever listed it;
-- what knows better says so in its own transaction: a number copied from
-- the shared list leaves again (it is there already), and one listed by
-- `suppress add|import` is pushed only if the shared list has never known
-- it (if_unknown: a removal made for every host is not undone by one
-- host's older copy). A number taken off the list here leaves the outbox.
-- The reason and time pushed are the suppressions row's, read at the push.
CREATE TABLE suppression_push (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    phone      TEXT    NOT NULL UNIQUE,
    if_unknown INTEGER NOT NULL DEFAULT 0
);

CREATE TRIGGER suppressions_push AFTER INSERT ON suppressions BEGIN
    INSERT OR REPLACE INTO suppression_push (phone, if_unknown) VALUES (NEW.phone, 0);
END;

CREATE TRIGGER suppressions_unpush AFTER DELETE ON suppressions BEGIN
    DELETE FROM suppression_push WHERE phone = OLD.phone;
END;

-- What was listed before this migration (by hand, by 131050, or copied
-- from Redis: it can no longer be told apart) goes up only where the
-- shared list has never known the number.
INSERT INTO suppression_push (phone, if_unknown)
    SELECT phone, 1 FROM suppressions ORDER BY created_at, phone;
