-- What Meta charges (issue 28).
--
-- Rate cards as `wasend pricing import` read them: one currency each, in
-- force from effective (a date, YYYY-MM-DD, UTC) until until ('' : until
-- the currency's next card). Prices are micro-units of the currency.
CREATE TABLE pricing_cards (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    currency    TEXT    NOT NULL,
    effective   TEXT    NOT NULL,
    until       TEXT    NOT NULL DEFAULT '',
    source      TEXT    NOT NULL DEFAULT '',
    imported_at INTEGER NOT NULL,
    UNIQUE (currency, effective)
);

-- A card's prices: tier_from 0 is a market's list price in a category;
-- a volume tier prices the tier_from-th to the tier_to-th message of a
-- month (tier_to 0: no end).
CREATE TABLE pricing_rates (
    card_id   INTEGER NOT NULL REFERENCES pricing_cards(id) ON DELETE CASCADE,
    market    TEXT    NOT NULL,
    category  TEXT    NOT NULL,
    tier_from INTEGER NOT NULL DEFAULT 0,
    tier_to   INTEGER NOT NULL DEFAULT 0,
    price     INTEGER NOT NULL CHECK (price >= 0),
    PRIMARY KEY (card_id, market, category, tier_from)
) WITHOUT ROWID;

-- A status webhook's pricing beside its category (message_statuses.pricing):
-- its type (regular, free_customer_service, free_entry_point), its model
-- and the older billable flag (0 when it said false, else NULL).
ALTER TABLE message_statuses ADD COLUMN pricing_type  TEXT NOT NULL DEFAULT '';
ALTER TABLE message_statuses ADD COLUMN pricing_model TEXT NOT NULL DEFAULT '';
ALTER TABLE message_statuses ADD COLUMN billable      INTEGER;

-- A campaign's budget (--max-cost): micro-units of max_cost_currency, 0
-- for none. messages.price is what the budget counts for a row (its
-- market × category list price, set when a run with a budget starts);
-- campaign_spend.committed is the sum over rows accepted or in flight,
-- kept by the trigger internal/store/pricing.go creates.
ALTER TABLE campaigns ADD COLUMN max_cost          INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN max_cost_currency TEXT    NOT NULL DEFAULT '';
ALTER TABLE messages  ADD COLUMN price             INTEGER NOT NULL DEFAULT 0;
CREATE TABLE campaign_spend (
    campaign_id INTEGER PRIMARY KEY,
    committed   INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
