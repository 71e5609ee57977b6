package pgstore

import "database/sql"

// Reader is a database/sql handle on the pool (pgx's stdlib adapter) for
// the read models' queries (internal/readmodel), which they write once for
// both drivers and rebind to Postgres's placeholders (ReaderDialect).
func (s *Store) Reader() *sql.DB { return s.reader }

// ReaderDialect tells the read models that Reader speaks Postgres.
func (s *Store) ReaderDialect() string { return "postgres" }
