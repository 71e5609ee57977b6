-- The WhatsApp Business Account an account's number belongs to (account
-- add|set --waba-id): template sync reads each WABA's templates with its
-- account's token, and the template preflight checks a campaign against
-- the templates of the WABAs of the accounts that send it. '' unknown.
ALTER TABLE accounts ADD COLUMN waba_id TEXT NOT NULL DEFAULT '';
