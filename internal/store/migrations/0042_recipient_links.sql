-- Phone numbers and business-scoped user ids seen together in webhooks
-- (issue 27): contacts[].wa_id with user_id, a status's recipient_id with
-- recipient_user_id. A BSUID names one person within one business
-- portfolio, so it is the key; a phone may have one per portfolio. Imports
-- read them to treat one person as one (duplicates, the suppression list,
-- recent sends) and to send to the phone when a row gives only the id;
-- inbound messages that carry only the id find the rows sent to the phone.
CREATE TABLE recipient_links (
    user_id TEXT    PRIMARY KEY,
    phone   TEXT    NOT NULL, -- E.164 with '+'
    seen_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX recipient_links_phone ON recipient_links (phone);
