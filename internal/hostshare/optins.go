package hostshare

import (
	"context"

	"github.com/wasend/wasend/internal/store"
)

// OptIns are the opt-ins suppressed numbers sent after they were listed,
// as this host's receiver kept them: inbound messages are not shared, so
// each host lists what reached it.
func (r *Record) OptIns(ctx context.Context) (map[string]store.OptIn, error) {
	return r.st.OptInsSinceSuppressed(ctx)
}
