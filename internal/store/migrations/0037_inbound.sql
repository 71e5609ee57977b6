-- Inbound messages (issue 27): what people sent to the business numbers,
-- as the messages webhook reported them, kept for the inbound retention
-- (setting inbound-retention) and then pruned.
--
-- id is Meta's message id (a synthetic one for a marketing preference or
-- an entry without one): a retried body inserts nothing. phone is the
-- sender in E.164. account_id is the account of the number it reached.
-- kind is what the rules decided (opt-out, opt-in, or '' for an answer
-- only) with its reason. message_id is the message of ours it replies to
-- (context.id, or the latest sent to the phone within the reply window);
-- unknown marks a type or shape wasend does not read, kept in raw.
CREATE TABLE inbound_messages (
    id              TEXT    PRIMARY KEY,
    phone           TEXT    NOT NULL,
    at              INTEGER NOT NULL, -- the webhook's own timestamp
    received_at     INTEGER NOT NULL,
    phone_number_id TEXT    NOT NULL DEFAULT '',
    account_id      INTEGER REFERENCES accounts(id) ON DELETE SET NULL,
    type            TEXT    NOT NULL DEFAULT '',
    text            TEXT    NOT NULL DEFAULT '',
    payload         TEXT    NOT NULL DEFAULT '',
    context_id      TEXT    NOT NULL DEFAULT '',
    name            TEXT    NOT NULL DEFAULT '',
    kind            TEXT    NOT NULL DEFAULT '' CHECK (kind IN ('', 'opt-out', 'opt-in')),
    reason          TEXT    NOT NULL DEFAULT '',
    message_id      INTEGER REFERENCES messages(id) ON DELETE SET NULL,
    unknown         INTEGER NOT NULL DEFAULT 0,
    raw             TEXT    NOT NULL DEFAULT '',
    -- 1: an answer that came while a message to its phone was in flight
    -- (sending): linked once that send is recorded, at a later drain.
    link_wait       INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX inbound_messages_link_wait ON inbound_messages (at) WHERE link_wait = 1;
CREATE INDEX inbound_messages_phone ON inbound_messages (phone, at);
CREATE INDEX inbound_messages_at ON inbound_messages (at);
CREATE INDEX inbound_messages_message ON inbound_messages (message_id) WHERE message_id IS NOT NULL;

-- A message's first reply, kept on the row (it outlives the inbound
-- retention): export prints it, and reply_counts count the rows that have
-- one. The reply lookup by recipient reads the sends to a phone: the index
-- holds only rows in flight or sent, so an import (rows pending, in random
-- phone order) writes no entry in it — a full index on phone tripled a 1M
-- row import; a claim and its outcome write one entry a message.
ALTER TABLE messages ADD COLUMN first_reply_at   INTEGER;
ALTER TABLE messages ADD COLUMN first_reply_text TEXT;
ALTER TABLE messages ADD COLUMN opted_out_at     INTEGER;
CREATE INDEX messages_phone_sent ON messages (phone) WHERE state IN ('sending', 'sent');

-- Replies and opt-outs counted by campaign and account (0: none) as they
-- are recorded, so that status never reads a campaign's messages for them.
CREATE TABLE reply_counts (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    account_id  INTEGER NOT NULL,
    replied     INTEGER NOT NULL DEFAULT 0, -- rows with a first reply
    opted_out   INTEGER NOT NULL DEFAULT 0, -- rows whose recipient opted out by answering
    PRIMARY KEY (campaign_id, account_id)
) WITHOUT ROWID;
