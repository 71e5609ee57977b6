-- A campaign's validity deadline, fixed once (issue 23, finding 13):
-- --at plus --expire-after, set at import or by a new --at; without --at,
-- the first claim plus --expire-after, set by that claim. A run of the same
-- command again never moves it. NULL: never, or not fixed yet.
--
-- A campaign that already began keeps the deadline it was shown (its first
-- claim plus the validity); one not begun yet counts from its --at.
ALTER TABLE campaigns ADD COLUMN expires_at INTEGER;
UPDATE campaigns SET expires_at = coalesce(began_at, start_at) + expire_after
    WHERE expire_after > 0 AND coalesce(began_at, start_at) IS NOT NULL;
