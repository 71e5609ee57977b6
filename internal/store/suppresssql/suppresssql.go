// Package suppresssql is the suppression list's writes by hand and its
// outbox to the shared list (suppression_push, migration 0021), written
// once for both drivers of the store as recordsql writes the record path.
// Copying the shared list in (ApplySuppressions) stays each driver's:
// Postgres pipelines it in one batch.
package suppresssql

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/dialect"
	"github.com/wasend/wasend/internal/store/managesql"
)

// Suppress lists numbers in tx and returns how many were not listed
// before. A number already listed keeps the time it was first listed; its
// reason changes only when a non-empty one is given. Phones must be
// normalised to E.164 first (campaign.CheckListable, which the caller
// runs before its transaction): a number written any other way would
// never match an import. A number newly listed waits to be pushed to the
// shared list only if that list has never known it.
func Suppress(ctx context.Context, tx managesql.Tx, d dialect.Dialect, list []campaign.Suppression, now time.Time) (added int, err error) {
	q := &byDialect[d]
	for _, sp := range list {
		n, err := tx.Exec(ctx, q.insert, sp.Phone, sp.Reason, now.UnixNano())
		switch {
		case err != nil:
		case n > 0:
			added++
			// Listed by hand: shared only where the shared list never
			// knew the number (see ToPush).
			_, err = tx.Exec(ctx, q.ifUnknown, sp.Phone)
		case sp.Reason != "":
			_, err = tx.Exec(ctx, q.reason, sp.Reason, sp.Phone)
		}
		if err != nil {
			return 0, fmt.Errorf("suppress %s: %w", sp.Phone, err)
		}
	}
	return added, nil
}

// CheckListable is campaign.CheckListable for every number of list.
func CheckListable(list []campaign.Suppression) error {
	for _, sp := range list {
		if err := campaign.CheckListable(sp.Phone); err != nil {
			return err
		}
	}
	return nil
}

// Unsuppress takes numbers off the list in one statement and returns how
// many were on it.
func Unsuppress(ctx context.Context, tx managesql.Tx, d dialect.Dialect, phones []string) (int, error) {
	q := &byDialect[d]
	list, err := q.list(phones)
	if err == nil {
		var n int64
		n, err = tx.Exec(ctx, q.remove, list)
		if err == nil {
			return int(n), nil
		}
	}
	return 0, fmt.Errorf("unsuppress: %w", err)
}

// Pushed takes the numbers pushed, up to seq, out of the outbox: the
// shared list has them. A number listed again since (a later seq) stays.
func Pushed(ctx context.Context, tx managesql.Tx, d dialect.Dialect, seq int64) error {
	if _, err := tx.Exec(ctx, byDialect[d].pushed, seq); err != nil {
		return fmt.Errorf("record the suppressions shared: %w", err)
	}
	return nil
}

// PushAll puts the whole list in the outbox, each number to be listed on
// the shared list if that list has never known it: after the shared list
// was started anew (Redis lost its data), so the hosts fill it again. A
// number already waiting keeps its place and kind.
func PushAll(ctx context.Context, tx managesql.Tx, d dialect.Dialect) (int, error) {
	n, err := tx.Exec(ctx, byDialect[d].pushAll)
	if err != nil {
		return 0, fmt.Errorf("queue the suppression list for sharing: %w", err)
	}
	return int(n), nil
}

// statements are this package's SQL in one dialect.
type statements struct {
	insert, ifUnknown, reason, remove, pushed, pushAll string
	// list is the argument remove's ?1 takes for phones.
	list func(phones []string) (any, error)
}

var byDialect = dialect.Both(build)

func build(d dialect.Dialect) statements {
	b := d.Bind
	q := statements{
		insert:    b(`INSERT INTO suppressions (phone, reason, created_at) VALUES (?1, ?2, ?3) ON CONFLICT (phone) DO NOTHING`),
		ifUnknown: b(`UPDATE suppression_push SET if_unknown = 1 WHERE phone = ?1`),
		reason:    b(`UPDATE suppressions SET reason = ?1 WHERE phone = ?2`),
		pushed:    b(`DELETE FROM suppression_push WHERE seq <= ?1`),
		// WHERE true: SQLite reads an upsert after a bare FROM as a join.
		pushAll: `INSERT INTO suppression_push (phone, if_unknown) SELECT phone, 1 FROM suppressions WHERE true
			ORDER BY created_at, phone ON CONFLICT (phone) DO NOTHING`,
	}
	if d == dialect.Postgres {
		q.remove = `DELETE FROM suppressions WHERE phone = ANY($1)`
		q.list = func(phones []string) (any, error) { return phones, nil }
	} else {
		// One statement text for any number of phones: a JSON array.
		q.remove = `DELETE FROM suppressions WHERE phone IN (SELECT value FROM json_each(?1))`
		q.list = func(phones []string) (any, error) {
			b, err := json.Marshal(phones)
			return string(b), err
		}
	}
	return q
}
