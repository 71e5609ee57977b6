package hostshare

import (
	"context"

	"github.com/wasend/wasend/internal/readmodel"
)

// OptIns are the opt-ins suppressed numbers sent after they were listed,
// as this host's receiver kept them: inbound messages are not shared, so
// each host lists what reached it.
func (r *Record) OptIns(ctx context.Context) (map[string]readmodel.OptIn, error) {
	return readmodel.New(r.st).OptInsSinceSuppressed(ctx)
}
