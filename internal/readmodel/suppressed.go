package readmodel

import (
	"context"
	"fmt"
	"strings"
)

// SuppressedIn returns the numbers among phones that are on the
// suppression list, with their reasons ("" when none was given): what an
// import's screening asks of each batch.
func (r *Reader) SuppressedIn(ctx context.Context, phones []string) (map[string]string, error) {
	var why map[string]string
	const chunk = 500 // variables per statement stay well under SQLite's limit
	for len(phones) > 0 {
		n := min(len(phones), chunk)
		args := make([]any, n)
		for i, p := range phones[:n] {
			args[i] = p
		}
		phones = phones[n:]
		rows, err := r.db.QueryContext(ctx, `SELECT phone, reason FROM suppressions WHERE phone IN (?`+
			strings.Repeat(", ?", n-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("check suppression list: %w", err)
		}
		for rows.Next() {
			var phone, reason string
			if err := rows.Scan(&phone, &reason); err != nil {
				rows.Close()
				return nil, fmt.Errorf("check suppression list: %w", err)
			}
			if why == nil {
				why = map[string]string{}
			}
			why[phone] = reason
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("check suppression list: %w", err)
		}
	}
	return why, nil
}
