package store

import (
	"strconv"
	"strings"

	"github.com/wasend/wasend/internal/campaign"
)

// The SQL the store's state moves are built from, generated from the
// tables in internal/campaign (Transitions, CampaignTransitions,
// DeliveryLadder): no statement spells a move's states or the delivery
// ladder's ranks by hand.

// fromSQL is the condition on a row's state column that t requires:
// "state = 'sending'" or "state IN ('sending', 'unknown')".
func fromSQL(t campaign.Transition, column string) string { return stateIn(column, t.From()) }

// toSQL is the assignment of t's target state: "state = 'sent'".
func toSQL(t campaign.Transition) string { return "state = " + quote(t.To()) }

// campaignFromSQL is the condition on a campaign's state column that t
// requires.
func campaignFromSQL(t campaign.CampaignTransition, column string) string {
	return stateIn(column, campaign.CampaignTransitions[t].From)
}

// campaignToSQL is the assignment of t's target state.
func campaignToSQL(t campaign.CampaignTransition) string {
	return "state = " + quote(campaign.CampaignTransitions[t].To)
}

// deliveryRankSQL is campaign.Delivery.Rank of the expression expr (a
// delivery column or a parameter): 0 for NULL or a status off the ladder.
func deliveryRankSQL(expr string) string {
	var b strings.Builder
	b.WriteString("CASE " + expr)
	for _, r := range campaign.DeliveryLadder {
		b.WriteString(" WHEN " + quote(r.Delivery) + " THEN " + strconv.Itoa(r.Delivery.Rank()))
	}
	b.WriteString(" ELSE 0 END")
	return b.String()
}

// receivedSQL is campaign.Delivery.Received of the delivery column col
// (NULL: no status yet, not received).
func receivedSQL(col string) string {
	var in []campaign.Delivery
	for _, r := range campaign.DeliveryLadder {
		if r.Received {
			in = append(in, r.Delivery)
		}
	}
	return stateIn("coalesce("+col+", '')", in)
}

// deliveryIsSQL is the condition that the delivery column col holds d
// (false for NULL).
func deliveryIsSQL(col string, d campaign.Delivery) string {
	return "coalesce(" + col + ", '') = " + quote(d)
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

// quote is a state as an SQL string literal. States are constants of
// internal/campaign without quotes; a quote is doubled all the same.
func quote[S ~string](s S) string { return "'" + strings.ReplaceAll(string(s), "'", "''") + "'" }

// fenceSQL is the fence check (campaign.FenceOK) of a write after a claim:
// the row's fence column equals the claim's, param.
func fenceSQL(column, param string) string { return column + " = " + param }
