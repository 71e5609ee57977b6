-- How far this database has copied state several hosts share through Redis
-- (the suppression list, under --limits): the shared list's epoch (a new
-- one when Redis lost its data) and the version of its last change
-- applied. Written in the transaction that applies the changes, so a
-- sender that starts again pulls only what changed since.
CREATE TABLE shared_sync (
    name    TEXT PRIMARY KEY,
    epoch   TEXT    NOT NULL,
    version INTEGER NOT NULL
);
