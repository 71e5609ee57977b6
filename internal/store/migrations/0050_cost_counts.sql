-- A campaign's estimate and actual cost from kept counts (issue 28): status
-- --json, show, cost and report priced a campaign by reading each of its
-- rows (the estimate) and each of its delivered messages with their
-- statuses (the actual cost), so with rate cards they grew with the rows.
--
-- A number's market follows from its calling code, at most four digits
-- (internal/pricing's table): the first five characters of the number
-- place it as exactly as the whole number does, so counts by that prefix
-- give the estimate and the actual cost by market in Go.
--
-- The triggers in internal/store/counts.sql keep these tables; the store
-- fills them from scratch and creates the triggers whenever one is
-- missing: on the first open after this migration.

-- Rows that may still cost (pending, sending, sent, unknown: every state
-- but failed and expired), by campaign and number prefix.
CREATE TABLE cost_counts (
    campaign_id INTEGER NOT NULL,
    prefix      TEXT    NOT NULL, -- substr(phone, 1, 5)
    n           INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, prefix)
) WITHOUT ROWID;

-- Each message a delivered or read status said arrived: its campaign,
-- number prefix, the UTC day of its first such status (the card in force
-- that day prices it) and the pricing of its latest status that carries
-- one (category, type, billable: -1 when none said). Its statuses come one
-- by one, and Postgres runs a statement's row triggers once the statement
-- is done: a trigger replaces the message's row here with what all its
-- statuses say now and moves charge_counts by the difference, which is
-- right however many of its statuses one statement moved.
CREATE TABLE message_charges (
    message_id   INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    campaign_id  INTEGER NOT NULL,
    prefix       TEXT    NOT NULL,
    day          INTEGER NOT NULL, -- first delivered or read at / 86400e9
    category     TEXT    NOT NULL,
    pricing_type TEXT    NOT NULL,
    billable     INTEGER NOT NULL
);

-- The messages of message_charges counted by campaign, number
-- prefix, day and pricing.
CREATE TABLE charge_counts (
    campaign_id  INTEGER NOT NULL,
    prefix       TEXT    NOT NULL,
    day          INTEGER NOT NULL, -- first delivered or read at / 86400e9
    category     TEXT    NOT NULL,
    pricing_type TEXT    NOT NULL,
    billable     INTEGER NOT NULL,
    n            INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, prefix, day, category, pricing_type, billable)
) WITHOUT ROWID;

-- What each message's statuses say it was charged, none until a delivered
-- or read status came: the first of those gives the day, the latest status
-- with pricing (the earliest rung among those of one instant) the pricing.
-- The triggers copy a message's row of it into message_charges when a
-- status of the message comes or is matched; read for one message it
-- costs a few index reads.
CREATE VIEW message_charge_now AS
SELECT m.id AS message_id, m.campaign_id AS campaign_id, substr(m.phone, 1, 5) AS prefix,
    (SELECT min(s.at) FROM message_statuses s WHERE s.message_id = m.id AND s.status IN ('delivered', 'read'))
        / 86400000000000 AS day,
    coalesce((SELECT s.pricing FROM message_statuses s WHERE s.message_id = m.id AND s.pricing <> ''
        ORDER BY s.at DESC, s.status LIMIT 1), '') AS category,
    coalesce((SELECT s.pricing_type FROM message_statuses s WHERE s.message_id = m.id AND s.pricing <> ''
        ORDER BY s.at DESC, s.status LIMIT 1), '') AS pricing_type,
    coalesce((SELECT s.billable FROM message_statuses s WHERE s.message_id = m.id AND s.pricing <> ''
        ORDER BY s.at DESC, s.status LIMIT 1), -1) AS billable
FROM messages m
WHERE EXISTS (SELECT 1 FROM message_statuses s WHERE s.message_id = m.id AND s.status IN ('delivered', 'read'));
