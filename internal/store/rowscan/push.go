package rowscan

import (
	"fmt"

	"github.com/wasend/wasend/internal/store/driver"
)

// PushQuery reads the outbox of suppressions to share (Pushes), oldest
// first, on either driver: the limit's placeholder follows.
const PushQuery = `SELECT p.seq, p.phone, p.if_unknown <> 0, s.reason, s.created_at
	FROM suppression_push p JOIN suppressions s ON s.phone = p.phone ORDER BY p.seq LIMIT `

// Pushes reads the rows of PushQuery.
func Pushes(rows Rows) ([]driver.Push, error) {
	var out []driver.Push
	for rows.Next() {
		var (
			p       driver.Push
			created int64
		)
		if err := rows.Scan(&p.Seq, &p.Phone, &p.IfUnknown, &p.Reason, &created); err != nil {
			return nil, fmt.Errorf("read the suppressions to share: %w", err)
		}
		p.CreatedAt = FromNanos(created)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the suppressions to share: %w", err)
	}
	return out, nil
}
