-- Settings of the database itself, one row per key. 'timezone' is the IANA
-- zone whose calendar days are quota days: fixed on first use (store.Open),
-- changed only by `wasend config set timezone`, so that a shell with another
-- WASEND_TZ cannot open a second quota day on the same day.

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
