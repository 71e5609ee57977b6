package pgstore

import (
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/statesql"
)

// The only statements here that change a message's or a campaign's state,
// each named for its move and built from campaign.Transitions or
// campaign.CampaignTransitions as SQLite's transitions.go builds its own:
// each applies only to rows in the move's source states. No statement
// flips tally: on Postgres the triggers count every move.
var (
	claimSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveClaim) + `, attempts = attempts + 1, account_id = $1,
		runner_id = $2, quota_epoch = $3, updated_at = $4, window_wait = 0 WHERE ` + statesql.From(campaign.MoveClaim, "state") + ` AND id = ANY($5)`
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

	// A sent outcome is kept even after a rescue made the row unknown (the
	// wamid is the truth); the others apply only while the row is still
	// this runner's claim.
	recordSentBulkSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveRecordSent) + `, wamid = v.wamid, sent_at = v.at,
		updated_at = v.at, error_code = NULL, error_message = NULL
		FROM unnest($1::bigint[], $2::text[], $3::bigint[]) AS v(id, wamid, at)
		WHERE messages.id = v.id AND ` + statesql.From(campaign.MoveRecordSent, "messages.state")
	recordSentSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveRecordSent) + `, wamid = $1, sent_at = $2, updated_at = $2,
		error_code = NULL, error_message = NULL WHERE id = $3 AND ` + statesql.From(campaign.MoveRecordSent, "state")
	recordRetrySQL = `UPDATE messages SET ` + statesql.To(campaign.MoveRecordRetry) + `, next_attempt_at = $1, updated_at = $2,
		retries = retries + $3, error_code = $4, error_message = $5 WHERE id = $6 AND ` +
		statesql.From(campaign.MoveRecordRetry, "state") + ` AND runner_id = $7`
	recordFailedSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveRecordFailed) + `, updated_at = $1,
		error_code = $2, error_message = $3 WHERE id = $4 AND ` + statesql.From(campaign.MoveRecordFailed, "state") + ` AND runner_id = $5`
	recordUnknownSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveRecordUnknown) + `, updated_at = $1,
		error_code = $2, error_message = $3 WHERE id = $4 AND ` + statesql.From(campaign.MoveRecordUnknown, "state") + ` AND runner_id = $5`

	// A rescue: rows sending under a runner no longer registered.
	rescueSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveRescue) + `, updated_at = $1, error_message = $2
		WHERE ` + statesql.From(campaign.MoveRescue, "state") + ` AND (runner_id IS NULL OR runner_id NOT IN (SELECT id FROM runners))
		AND ($3::bigint = 0 OR campaign_id = $3::bigint) RETURNING id, campaign_id`

	requeueUndeliveredSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveRequeueUndelivered) + `, retries = 0, next_attempt_at = 0,
		runner_id = NULL, wamid = NULL, delivery = NULL, delivered_at = NULL, read_at = NULL, updated_at = $1
		WHERE campaign_id = $2 AND ` + statesql.From(campaign.MoveRequeueUndelivered, "state") + ` AND NOT ` + statesql.Received("delivery") + ` AND sent_at < $3`

	pauseCampaignSQL = `UPDATE campaigns SET ` + statesql.CampaignTo(campaign.CampaignPause) + `, pause_reason = $1
		WHERE id = $2 AND ` + statesql.CampaignFrom(campaign.CampaignPause, "state") + ` AND cancelled_at IS NULL`
	pauseNoAccountSQL = `UPDATE campaigns SET ` + statesql.CampaignTo(campaign.CampaignPauseNoAccount) + `, pause_reason = $1
		WHERE id = $2 AND ` + statesql.CampaignFrom(campaign.CampaignPauseNoAccount, "state")
	resumeCampaignSQL = `UPDATE campaigns SET ` + statesql.CampaignTo(campaign.CampaignResume) + `, pause_reason = ''
		WHERE id = $1 AND ` + statesql.CampaignFrom(campaign.CampaignResume, "state")
	finishCampaignSQL = `UPDATE campaigns SET ` + statesql.CampaignTo(campaign.CampaignFinish) + `, finished_at = $1
		WHERE id = $2 AND ` + statesql.CampaignFrom(campaign.CampaignFinish, "state")
	reopenCampaignSQL = `UPDATE campaigns SET ` + statesql.CampaignTo(campaign.CampaignReopen) + `, finished_at = NULL
		WHERE id = $1 AND ` + statesql.CampaignFrom(campaign.CampaignReopen, "state")
	cancelCampaignSQL = `UPDATE campaigns SET ` + statesql.CampaignTo(campaign.CampaignCancel) + `, finished_at = $1, cancelled_at = $1,
		pause_reason = '' WHERE id = $2 AND ` + statesql.CampaignFrom(campaign.CampaignCancel, "state") + ` AND cancelled_at IS NULL`
)

// requeueSQL moves a campaign's rows back to pending with a fresh retry
// budget, for the operator's two requeue transitions.
func requeueSQL(t campaign.Transition) string {
	return `UPDATE messages SET ` + statesql.To(t) + `, retries = 0, next_attempt_at = 0, runner_id = NULL, updated_at = $1
		WHERE campaign_id = $2 AND ` + statesql.From(t, "state")
}
