package claimsql

import "github.com/wasend/wasend/internal/store/dialect"

// The send log (contact_log) keeps one row per number and account that
// messaged it. A claim writes it, and nothing after: the row names the
// pair's last claim (last_msg, claimed at last_at) and the one before it
// (prev_msg at prev_at) while that one was not accepted yet, and an
// answer is read from their attempts. So a sent outcome writes no log: a
// send counts for the sticky sender once its attempt says 'sent'; one
// unanswered, failed, refused or lapsed binds no one. The pair's next
// claim folds what the API accepted into sent_at before it names itself:
// one look-up of each claim named, never growing with the history. What
// would drop a claim not yet answered is a third one of the same pair
// while the two before are still in flight (pair gap 0): its later
// acceptance is not seen. A campaign deleted folds its accepted sends in
// first (managesql), a send adopted from a status is folded in there
// (inboxsql), a claim taken back names the one before (statesql.Unlog,
// recordsql).

// accepted is when the API accepted the claim of the row's which_msg at
// which_at, NULL when it did not (or not yet).
func accepted(which string) string {
	return `(SELECT max(done_at) FROM attempts WHERE message_id = contact_log.` + which + `_msg
		AND account_id = contact_log.account_id AND claimed_at = contact_log.` + which + `_at AND outcome = 'sent')`
}

// SentAt is a send log row's latest send that the API accepted (0 for
// none), in d.
func SentAt(d dialect.Dialect) string {
	return d.Greatest(d.Greatest(`contact_log.sent_at`, `coalesce(`+accepted("last")+`, 0)`), `coalesce(`+accepted("prev")+`, 0)`)
}

// LogClaims is the conflict clause of a claim's insert into the send log
// (account_id, phone, last_at, last_msg; Postgres also prev_at and
// prev_msg, for a pair it met twice in one statement): a pair met before
// folds its accepted sends into sent_at, keeps its last claim as the one
// before when it was not accepted, and names the new claim. A claim as
// late as the last (one claim's two messages to a number) is named too.
func LogClaims(d dialect.Dialect) string {
	return `ON CONFLICT (phone, account_id) DO UPDATE SET sent_at = ` + SentAt(d) + `,
		prev_at = CASE WHEN excluded.prev_msg IS NULL THEN contact_log.last_at ELSE excluded.prev_at END,
		prev_msg = coalesce(excluded.prev_msg, CASE WHEN ` + accepted("last") + ` IS NULL THEN contact_log.last_msg END),
		last_at = excluded.last_at, last_msg = excluded.last_msg
		WHERE excluded.last_at >= contact_log.last_at`
}
