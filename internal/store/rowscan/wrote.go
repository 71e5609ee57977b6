package rowscan

import (
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
)

// Rows is a result set: *sql.Rows as well as pgx.Rows.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Wrote reads (key, business number, last message at) rows — when each
// recipient last wrote to each number — into one campaign.Wrote per key.
func Wrote(rows Rows) (map[string]campaign.Wrote, error) {
	last := map[string]campaign.Wrote{}
	for rows.Next() {
		var key, number string
		var at int64
		if err := rows.Scan(&key, &number, &at); err != nil {
			return nil, fmt.Errorf("read when recipients last wrote: %w", err)
		}
		if last[key] == nil {
			last[key] = campaign.Wrote{}
		}
		last[key].Note(number, FromNanos(at))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read when recipients last wrote: %w", err)
	}
	return last, nil
}
