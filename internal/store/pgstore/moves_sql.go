package pgstore

import "github.com/wasend/wasend/internal/campaign"

// The only statements here that change a message's or a campaign's state,
// each named for its move and built from campaign.Transitions or
// campaign.CampaignTransitions as SQLite's transitions.go builds its own:
// each applies only to rows in the move's source states. No statement
// flips tally: on Postgres the triggers count every move.
var (
	claimSQL = `UPDATE messages SET ` + toSQL(campaign.MoveClaim) + `, attempts = attempts + 1, account_id = $1,
		runner_id = $2, quota_epoch = $3, updated_at = $4, window_wait = 0 WHERE ` + fromSQL(campaign.MoveClaim, "state") + ` AND id = ANY($5)`
	suppressAtSendSQL = `UPDATE messages SET ` + toSQL(campaign.MoveSuppressAtSend) + `, updated_at = $1, error_code = $2,
		error_message = $3 WHERE id = $4 AND ` + fromSQL(campaign.MoveSuppressAtSend, "state")
	skipElsewhereSQL = `UPDATE messages SET ` + toSQL(campaign.MoveSkipElsewhere) + `, updated_at = $1, error_code = $2,
		error_message = $3 WHERE id = $4 AND ` + fromSQL(campaign.MoveSkipElsewhere, "state")
	skipNoWindowSQL = `UPDATE messages SET ` + toSQL(campaign.MoveSkipNoWindow) + `, updated_at = $1, error_code = $2,
		error_message = $3 WHERE id = $4 AND ` + fromSQL(campaign.MoveSkipNoWindow, "state")
	expireSQL = `UPDATE messages SET ` + toSQL(campaign.MoveExpire) + `, updated_at = $1, error_message = $2
		WHERE campaign_id = $3 AND ` + fromSQL(campaign.MoveExpire, "state")
	failNeverOpenSQL = `UPDATE messages SET ` + toSQL(campaign.MoveFailNeverOpen) + `, updated_at = $1, error_message = $2
		WHERE id = $3 AND ` + fromSQL(campaign.MoveFailNeverOpen, "state")

	// A sent outcome is kept even after a rescue made the row unknown (the
	// wamid is the truth); the others apply only while the row is still
	// this runner's claim.
	recordSentBulkSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRecordSent) + `, wamid = v.wamid, sent_at = v.at,
		updated_at = v.at, error_code = NULL, error_message = NULL
		FROM unnest($1::bigint[], $2::text[], $3::bigint[]) AS v(id, wamid, at)
		WHERE messages.id = v.id AND ` + fromSQL(campaign.MoveRecordSent, "messages.state")
	recordSentSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRecordSent) + `, wamid = $1, sent_at = $2, updated_at = $2,
		error_code = NULL, error_message = NULL WHERE id = $3 AND ` + fromSQL(campaign.MoveRecordSent, "state")
	recordRetrySQL = `UPDATE messages SET ` + toSQL(campaign.MoveRecordRetry) + `, next_attempt_at = $1, updated_at = $2,
		retries = retries + $3, error_code = $4, error_message = $5 WHERE id = $6 AND ` +
		fromSQL(campaign.MoveRecordRetry, "state") + ` AND runner_id = $7`
	recordFailedSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRecordFailed) + `, updated_at = $1,
		error_code = $2, error_message = $3 WHERE id = $4 AND ` + fromSQL(campaign.MoveRecordFailed, "state") + ` AND runner_id = $5`
	recordUnknownSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRecordUnknown) + `, updated_at = $1,
		error_code = $2, error_message = $3 WHERE id = $4 AND ` + fromSQL(campaign.MoveRecordUnknown, "state") + ` AND runner_id = $5`

	// A rescue: rows sending under a runner no longer registered.
	rescueSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRescue) + `, updated_at = $1, error_message = $2
		WHERE ` + fromSQL(campaign.MoveRescue, "state") + ` AND (runner_id IS NULL OR runner_id NOT IN (SELECT id FROM runners))
		AND ($3::bigint = 0 OR campaign_id = $3::bigint) RETURNING id, campaign_id`

	requeueUndeliveredSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRequeueUndelivered) + `, retries = 0, next_attempt_at = 0,
		runner_id = NULL, wamid = NULL, delivery = NULL, delivered_at = NULL, read_at = NULL, updated_at = $1
		WHERE campaign_id = $2 AND ` + fromSQL(campaign.MoveRequeueUndelivered, "state") + ` AND NOT ` + receivedSQL("delivery") + ` AND sent_at < $3`

	pauseCampaignSQL = `UPDATE campaigns SET ` + campaignToSQL(campaign.CampaignPause) + `, pause_reason = $1
		WHERE id = $2 AND ` + campaignFromSQL(campaign.CampaignPause, "state") + ` AND cancelled_at IS NULL`
	pauseNoAccountSQL = `UPDATE campaigns SET ` + campaignToSQL(campaign.CampaignPauseNoAccount) + `, pause_reason = $1
		WHERE id = $2 AND ` + campaignFromSQL(campaign.CampaignPauseNoAccount, "state")
	resumeCampaignSQL = `UPDATE campaigns SET ` + campaignToSQL(campaign.CampaignResume) + `, pause_reason = ''
		WHERE id = $1 AND ` + campaignFromSQL(campaign.CampaignResume, "state")
	finishCampaignSQL = `UPDATE campaigns SET ` + campaignToSQL(campaign.CampaignFinish) + `, finished_at = $1
		WHERE id = $2 AND ` + campaignFromSQL(campaign.CampaignFinish, "state")
	reopenCampaignSQL = `UPDATE campaigns SET ` + campaignToSQL(campaign.CampaignReopen) + `, finished_at = NULL
		WHERE id = $1 AND ` + campaignFromSQL(campaign.CampaignReopen, "state")
	cancelCampaignSQL = `UPDATE campaigns SET ` + campaignToSQL(campaign.CampaignCancel) + `, finished_at = $1, cancelled_at = $1,
		pause_reason = '' WHERE id = $2 AND ` + campaignFromSQL(campaign.CampaignCancel, "state") + ` AND cancelled_at IS NULL`
)

// requeueSQL moves a campaign's rows back to pending with a fresh retry
// budget, for the operator's two requeue transitions.
func requeueSQL(t campaign.Transition) string {
	return `UPDATE messages SET ` + toSQL(t) + `, retries = 0, next_attempt_at = 0, runner_id = NULL, updated_at = $1
		WHERE campaign_id = $2 AND ` + fromSQL(t, "state")
}
