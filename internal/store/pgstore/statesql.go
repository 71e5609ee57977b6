package pgstore

import (
	"strings"

	"github.com/wasend/wasend/internal/campaign"
)

// The SQL of the named moves, built from the tables in internal/campaign as
// SQLite's statesql.go builds it: no statement here spells a move's states
// by hand. (The store's builders are unexported; these few lines are the
// same rules in this package.)

// fromSQL is the condition on a row's state column that t requires.
func fromSQL(t campaign.Transition, column string) string { return stateIn(column, t.From()) }

// toSQL is the assignment of t's target state.
func toSQL(t campaign.Transition) string { return "state = " + quote(t.To()) }

func campaignFromSQL(t campaign.CampaignTransition, column string) string {
	return stateIn(column, campaign.CampaignTransitions[t].From)
}

func campaignToSQL(t campaign.CampaignTransition) string {
	return "state = " + quote(campaign.CampaignTransitions[t].To)
}

// receivedSQL is campaign.Delivery.Received of the delivery column col.
func receivedSQL(col string) string {
	var in []campaign.Delivery
	for _, r := range campaign.DeliveryLadder {
		if r.Received {
			in = append(in, r.Delivery)
		}
	}
	return stateIn("coalesce("+col+", '')", in)
}

func stateIn[S ~string](column string, from []S) string {
	if len(from) == 1 {
		return column + " = " + quote(from[0])
	}
	q := make([]string, len(from))
	for i, s := range from {
		q[i] = quote(s)
	}
	return column + " IN (" + strings.Join(q, ", ") + ")"
}

// quote is a state as an SQL string literal.
func quote[S ~string](s S) string { return "'" + strings.ReplaceAll(string(s), "'", "''") + "'" }
