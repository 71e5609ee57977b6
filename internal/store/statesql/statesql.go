// Package statesql is the SQL of the store's named state moves as both
// drivers build it, generated from the tables in internal/campaign
// (Transitions, CampaignTransitions, DeliveryLadder): no statement of
// either driver spells a move's states or the delivery ladder's ranks by
// hand. Everything here is plain SQL that SQLite and Postgres read alike
// (no placeholders), but for Template, which fills SQLite's trigger files.
package statesql

import (
	"strconv"
	"strings"
	"text/template"

	"github.com/wasend/wasend/internal/campaign"
)

// From is the condition on a row's state column that t requires:
// "state = 'sending'" or "state IN ('sending', 'unknown')".
func From(t campaign.Transition, column string) string { return In(column, t.From()) }

// To is the assignment of t's target state: "state = 'sent'".
func To(t campaign.Transition) string { return "state = " + Quote(t.To()) }

// CampaignFrom is the condition on a campaign's state column that t
// requires.
func CampaignFrom(t campaign.CampaignTransition, column string) string {
	return In(column, campaign.CampaignTransitions[t].From)
}

// CampaignTo is the assignment of t's target state.
func CampaignTo(t campaign.CampaignTransition) string {
	return "state = " + Quote(campaign.CampaignTransitions[t].To)
}

// DeliveryRank is campaign.Delivery.Rank of the expression expr (a
// delivery column or a parameter): 0 for NULL or a status off the ladder.
func DeliveryRank(expr string) string {
	var b strings.Builder
	b.WriteString("CASE " + expr)
	for _, r := range campaign.DeliveryLadder {
		b.WriteString(" WHEN " + Quote(r.Delivery) + " THEN " + strconv.Itoa(r.Delivery.Rank()))
	}
	b.WriteString(" ELSE 0 END")
	return b.String()
}

// Received is campaign.Delivery.Received of the delivery column col
// (NULL: no status yet, not received).
func Received(col string) string {
	var in []campaign.Delivery
	for _, r := range campaign.DeliveryLadder {
		if r.Received {
			in = append(in, r.Delivery)
		}
	}
	return In("coalesce("+col+", '')", in)
}

// DeliveryIs is the condition that the delivery column col holds d (false
// for NULL).
func DeliveryIs(col string, d campaign.Delivery) string {
	return "coalesce(" + col + ", '') = " + Quote(d)
}

// In is the condition that column holds one of from.
func In[S ~string](column string, from []S) string {
	if len(from) == 1 {
		return column + " = " + Quote(from[0])
	}
	q := make([]string, len(from))
	for i, s := range from {
		q[i] = Quote(s)
	}
	return column + " IN (" + strings.Join(q, ", ") + ")"
}

// Quote is a state as an SQL string literal. States are constants of
// internal/campaign without quotes; a quote is doubled all the same.
func Quote[S ~string](s S) string { return "'" + strings.ReplaceAll(string(s), "'", "''") + "'" }

// Fence is the fence check (campaign.FenceOK) of a write after a claim:
// the row's fence column equals the claim's, param.
func Fence(column, param string) string { return column + " = " + param }

// Started is the condition that the request of the claim holding the
// messages row msg started (or, with started false, never did): the start
// mark of the row's claim's attempt, its latest, which a claim inserts
// unmarked and the runner marks just before the request (its close leaves
// the mark). A row with no attempt counts as started: never resent blindly.
func Started(msg string, started bool) string {
	mark := "0"
	if started {
		mark = "1"
	}
	return `coalesce((SELECT a.started FROM attempts AS a WHERE a.message_id = ` + msg + `.id ORDER BY a.id DESC LIMIT 1), 1) = ` + mark
}

// Template fills in text, a text/template of trigger SQL, whose functions
// are the delivery ladder's guards: {{received "NEW.status"}} (Received),
// {{read}} and {{held}} (those rungs, quoted). It panics on a text that
// does not parse or fill: its callers' texts are embedded files, filled
// once at start-up (and in their tests).
func Template(name, text string) string {
	var b strings.Builder
	t := template.Must(template.New(name).Funcs(template.FuncMap{"received": Received,
		"read": func() string { return Quote(campaign.DeliveryRead) },
		"held": func() string { return Quote(campaign.DeliveryHeld) }}).Parse(text))
	if err := t.Execute(&b, nil); err != nil {
		panic(err)
	}
	return b.String()
}

// Unlog takes back the contact-log entries of the claims of the rows that
// where selects (a condition on messages) while their attempts are still
// open: the entry a claim wrote (its account, its recipient, last_at its
// attempt's claimed_at, last_attempt its attempt) names the claim before it, as a send the
// API refused does. For a claim that lapsed: nothing reached the API, so
// the pair gap, the sticky sender and the reach must not count it.
func Unlog(where string) string {
	return `UPDATE contact_log SET last_at = prev_at, prev_at = 0, last_attempt = prev_attempt, prev_attempt = NULL
		FROM messages JOIN attempts ON attempts.message_id = messages.id AND attempts.done_at IS NULL
		WHERE ` + where + ` AND contact_log.account_id = attempts.account_id AND contact_log.phone = messages.phone
			AND contact_log.last_at = attempts.claimed_at AND coalesce(contact_log.last_attempt, attempts.id) = attempts.id`
}
