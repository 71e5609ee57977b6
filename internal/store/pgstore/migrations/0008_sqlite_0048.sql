-- SQLite's 0048: the customer service window per business number (the
-- claim reads when each recipient last wrote to each number from this index)
-- and the links each host learned in order (pushed under --limits).
CREATE INDEX inbound_messages_number ON inbound_messages (phone, phone_number_id, at);
CREATE INDEX recipient_links_seen ON recipient_links (seen_at, user_id);
