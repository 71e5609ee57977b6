package claimsql

import "github.com/wasend/wasend/internal/store/dialect"

// The send log (contact_log) keeps one row per number and account that
// messaged it. A claim writes it, and nothing after: the row names the
// attempt of the pair's last claim (last_attempt, claimed at last_at) and
// of the one before (prev_attempt at prev_at), and an answer is read from
// them. So a sent outcome writes no log: a send counts for the sticky
// sender once its attempt says 'sent'; one unanswered, failed, refused or
// lapsed binds no one. The pair's next claim folds what the API accepted
// into sent_at before it names itself: one look-up of an attempt by its
// id, never growing with the history. The one before is looked up only
// while it may add to sent_at (claimed after it): it was in flight when
// the next claim came. What can go unseen takes three claims of one pair,
// each made before the one before it was answered (pair gap 0, or a
// request hung): the acceptance of the first or the second. A campaign
// deleted folds its accepted sends in first (managesql), a send adopted
// from a status is folded in there (inboxsql), a claim taken back names
// the one before (statesql.Unlog, recordsql).

// accepted is when the API accepted the claim the row's which_attempt
// names, 0 when it did not (or not yet); what guards the look-up.
func accepted(which, guard string) string {
	return `coalesce(CASE WHEN ` + guard + ` THEN (SELECT done_at FROM attempts WHERE id = contact_log.` + which +
		`_attempt AND outcome = 'sent') END, 0)`
}

// prevOpen is when the claim before the last may add to sent_at: claimed
// after it, it was not folded in.
const prevOpen = `contact_log.prev_attempt IS NOT NULL AND contact_log.prev_at > contact_log.sent_at`

// sentAt is a send log row's latest send that the API accepted (0 for
// none), in d: what a claim folds.
func sentAt(d dialect.Dialect) string {
	return d.Greatest(d.Greatest(`contact_log.sent_at`, accepted("last", `contact_log.last_attempt IS NOT NULL`)),
		accepted("prev", prevOpen))
}

// readSent is sentAt for a read of many rows, and the rest of its FROM
// after from (contact_log, or what it is joined to): the attempts joined,
// their cursor opened once, not at each row.
func readSent(d dialect.Dialect, from string) string {
	return d.Greatest(d.Greatest(`contact_log.sent_at`, `coalesce(l.done_at, 0)`), `coalesce(p.done_at, 0)`) + ` FROM ` + from + `
	LEFT JOIN attempts l ON l.id = contact_log.last_attempt AND l.outcome = 'sent'
	LEFT JOIN attempts p ON p.id = contact_log.prev_attempt AND p.outcome = 'sent' AND ` + prevOpen
}

// LogClaims is the conflict clause of a claim's insert into the send log
// (account_id, phone, last_at, last_attempt; Postgres also prev_at and
// prev_attempt, for a pair it met twice in one statement): a pair met
// before folds its accepted sends into sent_at and names the new claim
// and the one before. A claim as late as the last (one claim's two
// messages to a number) is named too.
func LogClaims(d dialect.Dialect) string {
	return `ON CONFLICT (phone, account_id) DO UPDATE SET sent_at = ` + sentAt(d) + `,
		prev_at = CASE WHEN excluded.prev_attempt IS NULL THEN contact_log.last_at ELSE excluded.prev_at END,
		prev_attempt = coalesce(excluded.prev_attempt, contact_log.last_attempt),
		last_at = excluded.last_at, last_attempt = excluded.last_attempt
		WHERE excluded.last_at >= contact_log.last_at`
}
