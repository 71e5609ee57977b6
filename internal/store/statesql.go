package store

import (
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/statesql"
)

// The SQL the store's state moves are built from is statesql's, which
// Postgres's driver builds its own from too; these names keep the
// statements here short.

func fromSQL(t campaign.Transition, column string) string { return statesql.From(t, column) }
func toSQL(t campaign.Transition) string                  { return statesql.To(t) }
func deliveryRankSQL(expr string) string                  { return statesql.DeliveryRank(expr) }
func receivedSQL(col string) string                       { return statesql.Received(col) }
func deliveryIsSQL(col string, d campaign.Delivery) string {
	return statesql.DeliveryIs(col, d)
}
func stateIn[S ~string](column string, from []S) string { return statesql.In(column, from) }
func quote[S ~string](s S) string                       { return statesql.Quote(s) }

// fenceSQL is the fence check (campaign.FenceOK) of a write after a claim:
// the row's fence column equals the claim's, param.
func fenceSQL(column, param string) string { return statesql.Fence(column, param) }
