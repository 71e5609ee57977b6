package pgstore

import (
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/statesql"
)

// The only statements here that change a message's state, each named for
// its move and built from campaign.Transitions as SQLite's transitions.go
// builds its own: each applies only to rows in the move's source states
// (a campaign's state moves, and the operator's, are managesql's). No statement
// flips tally: on Postgres the triggers count every move.
var (
	// A claim raises the fence (attempts) and leases the rows to the
	// runner (their attempts, inserted unstarted, carry the start mark).
	claimSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveClaim) + `, attempts = attempts + 1, account_id = $1,
		runner_id = $2, quota_epoch = $3, updated_at = $4, lease_until = $5, window_wait = 0
		WHERE ` + statesql.From(campaign.MoveClaim, "state") + ` AND id = ANY($6)`
	suppressAtSendSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveSuppressAtSend) + `, updated_at = $1, error_code = $2,
		error_message = $3 WHERE id = $4 AND ` + statesql.From(campaign.MoveSuppressAtSend, "state")
	skipElsewhereSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveSkipElsewhere) + `, updated_at = $1, error_code = $2,
		error_message = $3 WHERE id = $4 AND ` + statesql.From(campaign.MoveSkipElsewhere, "state")
	skipNoWindowSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveSkipNoWindow) + `, updated_at = $1, error_code = $2,
		error_message = $3 WHERE id = $4 AND ` + statesql.From(campaign.MoveSkipNoWindow, "state")
	expireSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveExpire) + `, updated_at = $1, error_message = $2
		WHERE campaign_id = $3 AND ` + statesql.From(campaign.MoveExpire, "state")
	failNeverOpenSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveFailNeverOpen) + `, updated_at = $1, error_message = $2
		WHERE id = $3 AND ` + statesql.From(campaign.MoveFailNeverOpen, "state")

	// Every write after a claim applies only while the row is still that
	// claim: its fence (fenceSQL). A sent outcome also applies to a row a
	// rescue made unknown under the same claim (the wamid is the truth);
	// a retry, failure or unknown leaves such a row as the operator sees it.
	// One row's outcome moves as recordsql builds them for both drivers.
	recordSentBulkSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveRecordSent) + `, wamid = v.wamid, sent_at = v.at,
		updated_at = v.at, error_code = NULL, error_message = NULL
		FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[]) AS v(id, wamid, at, fence)
		WHERE messages.id = v.id AND ` + keyedFence(campaign.MoveRecordSent.From(), "v.fence") + ` RETURNING messages.id`
	// startSQL marks claims' requests started on their attempts (the
	// messages rows are read, not written), each only while the attempt is
	// open and unmarked and its row still that claim, and returns those it
	// marked with their fence.
	startSQL = `UPDATE attempts SET started = 1 FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS v(id, msg, fence), messages
		WHERE attempts.id = v.id AND attempts.message_id = v.msg AND attempts.done_at IS NULL AND attempts.started = 0
		AND messages.id = v.msg AND ` + keyedFence([]campaign.State{campaign.Sending}, "v.fence") + ` RETURNING v.msg, v.fence`

	// The leases: a heartbeat extends its runner's that no rescuer ended
	// (even run out: until a rescuer takes a row, its holder may keep it);
	// those of runners no longer registered (known dead) end at once.
	// A row another transaction holds (its outcome, a rescue) is
	// passed over, not waited for: waiting, a heartbeat met the runner's own
	// sending transaction on the rows in another order (a deadlock, a
	// second lost under the claim lock); the next beat, well inside the
	// lease, extends it if it is still in flight.
	extendLeasesSQL = `UPDATE messages SET lease_until = $1 WHERE id IN (SELECT id FROM messages WHERE runner_id = $2
		AND state = ` + statesql.Quote(campaign.Sending) + ` AND lease_until > 0 AND lease_until <= $3 FOR UPDATE SKIP LOCKED)`
	endLeasesSQL = `UPDATE messages SET lease_until = 0 WHERE state = ` + statesql.Quote(campaign.Sending) + ` AND lease_until > 0
		AND (runner_id IS NULL OR runner_id NOT IN (SELECT id FROM runners)) AND ($1::bigint = 0 OR campaign_id = $1::bigint)`
)

// keyedFence is the state test and the fence check (statesql.Fence) of a
// bulk write after a claim whose rows are found by their key (messages.id
// = v.id): the state is tested inside the fence's comparison, a join
// clause, where no partial index on state can serve it and no estimate of
// how few rows are in those states makes a scan of the table look cheap.
// Tested on its own, a plan made without statistics (a new database), or
// on statistics taken while no row was in flight (an analyze after an
// import), walked messages_leases (every row claimed since the last
// vacuum), messages_phone_sent (every row sent) or the whole table at
// each call.
func keyedFence(states []campaign.State, fence string) string {
	return statesql.Fence(`CASE WHEN `+statesql.In("messages.state", states)+` THEN messages.attempts END`, fence)
}

// leaseExpirySQL is the statement of one rule of campaign.LeaseExpiry:
// rows in flight whose lease ran out (lease_until <= $3) and whose request
// started, or not, take the rule's move and give their lease up (campaign
// $4; 0: every campaign).
func leaseExpirySQL(r campaign.LeaseRule) string {
	return `UPDATE messages SET ` + statesql.To(r.Move) + `, updated_at = $1, error_message = $2, lease_until = 0
		WHERE ` + statesql.From(r.Move, "state") + ` AND lease_until <= $3 AND ($4::bigint = 0 OR campaign_id = $4::bigint)
		AND ` + statesql.Started("messages", r.Started) + ` RETURNING id, campaign_id, account_id, quota_epoch, attempts`
}

// lockExpiringSQL locks the open attempts of the rows in flight whose
// lease ran out by $1 (campaign $2; 0: every campaign) before
// leaseExpirySQL reads their start marks: a Start marking one commits
// first, and its mark is read (each statement its own snapshot), or waits
// and finds it closed. The mark is on the attempt, not the messages row
// the expiry moves, so the move's own lock would not order the two.
var lockExpiringSQL = `SELECT a.id FROM attempts AS a JOIN messages AS m ON m.id = a.message_id
	WHERE a.done_at IS NULL AND m.state = ` + statesql.Quote(campaign.Sending) + ` AND m.lease_until <= $1
	AND ($2::bigint = 0 OR m.campaign_id = $2::bigint) FOR UPDATE OF a`
