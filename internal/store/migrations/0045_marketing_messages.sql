-- The Marketing Messages API (issue 28): whether each WABA is onboarded to
-- it, as template sync last read marketing_messages_onboarding_status (the
-- portfolio accepts Meta's terms; every WABA of it then is).
CREATE TABLE waba_marketing (
    waba_id   TEXT    PRIMARY KEY,
    status    TEXT    NOT NULL,
    synced_at INTEGER NOT NULL
);

