package rowscan

import (
	"fmt"
	"strings"
)

// InboundPrefix keeps the inbound settings apart from the store's own in
// the settings table.
const InboundPrefix = "inbound."

// InboundSettings reads (key, value) rows of the inbound settings into a
// map by key without InboundPrefix.
func InboundSettings(rows Rows) (map[string]string, error) {
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("read inbound settings: %w", err)
		}
		out[strings.TrimPrefix(k, InboundPrefix)] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read inbound settings: %w", err)
	}
	return out, nil
}
