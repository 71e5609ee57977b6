-- CHECK constraints compare with OR, not IN: SQLite builds an IN list of
-- more than two constants into a temporary table, and in a CHECK it builds
-- it again for every row a statement writes (EXPLAIN shows no Once around
-- it). messages.state's and messages.delivery's were about a tenth of the
-- instructions of each message's import, claim and outcome (callgrind,
-- issue 25). The same values are admitted; the stored rows are valid
-- either way, so the schema is edited in place as 0014 and 0047 did. A
-- database whose text does not match keeps its IN lists: slower, as right.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
    SET sql = replace(replace(sql,
        'CHECK (state IN (''pending'', ''sending'', ''sent'', ''failed'', ''unknown'', ''expired''))',
        'CHECK (state = ''pending'' OR state = ''sending'' OR state = ''sent'' OR state = ''failed'' OR state = ''unknown'' OR state = ''expired'')'),
        'CHECK (delivery IN (''held'', ''sent'', ''delivered'', ''read'', ''failed''))',
        'CHECK (delivery = ''held'' OR delivery = ''sent'' OR delivery = ''delivered'' OR delivery = ''read'' OR delivery = ''failed'')')
    WHERE type = 'table' AND name = 'messages';
UPDATE sqlite_schema
    SET sql = replace(sql, 'CHECK (state IN (''running'', ''paused'', ''finished''))',
        'CHECK (state = ''running'' OR state = ''paused'' OR state = ''finished'')')
    WHERE type = 'table' AND name = 'campaigns';
UPDATE sqlite_schema
    SET sql = replace(sql, 'CHECK (status IN (''sent'', ''delivered'', ''read'', ''failed''))',
        'CHECK (status = ''sent'' OR status = ''delivered'' OR status = ''read'' OR status = ''failed'')')
    WHERE type = 'table' AND name = 'message_statuses';
UPDATE sqlite_schema
    SET sql = replace(sql, 'CHECK (kind IN ('''', ''opt-out'', ''opt-in''))',
        'CHECK (kind = '''' OR kind = ''opt-out'' OR kind = ''opt-in'')')
    WHERE type = 'table' AND name = 'inbound_messages';
PRAGMA writable_schema = OFF;
