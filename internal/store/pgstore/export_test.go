package pgstore

// Retried is how many transactions s ran again after Postgres aborted them
// for a deadlock or a serialization failure.
func Retried(s *Store) int64 { return s.retried.Load() }
