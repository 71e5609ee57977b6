-- The customer service window per business number (issue 27): Meta keeps
-- one per (number, person), and the claim reads when each recipient last
-- wrote to each number (phone_number_id) from this index alone.
CREATE INDEX inbound_messages_number ON inbound_messages (phone, phone_number_id, at);

-- The links each host learned, in the order it learned them: what a sender
-- under --limits pushes to the links several hosts share (internal/hostshare).
CREATE INDEX recipient_links_seen ON recipient_links (seen_at, user_id);
