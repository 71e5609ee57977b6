// Package managesql is the operator's moves on campaigns and accounts —
// pause, cancel, resume, delete, rename, requeue, remove an account — and
// the campaign-state moves the other paths take (finish, reopen, pause for
// want of an account or for a template), written once for both drivers of
// the store as recordsql writes the record path: what a move may do (a
// cancelled campaign is final, a live runner keeps its campaign and its
// account, a deleted campaign takes what it recorded with it) is kept in
// one place, and a fix to it is made once.
//
// Every move is one transaction of the caller's whose statements name the
// states they start from (campaign.Transitions, campaign.CampaignTransitions
// through statesql), so a move that no longer applies changes nothing and
// says why. Statements are written with SQLite's numbered placeholders and
// built for each Dialect when the package loads; where Postgres locks a row
// that SQLite's single writer holds already, the lock is a statement of its
// own, "" on SQLite.
package managesql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/dialect"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
	"github.com/wasend/wasend/internal/store/statesql"
)

// Tx is a driver's transaction (or, for reads, its database) as the moves
// use it.
type Tx interface {
	// Exec runs one statement of this package's and says how many rows it
	// changed.
	Exec(ctx context.Context, query string, args ...any) (rows int64, err error)
	// Row scans the first row of query into dest; found is false when
	// there is none.
	Row(ctx context.Context, query string, args []any, dest ...any) (found bool, err error)
}

// State reads a campaign's state as shown (cancelled included).
func State(ctx context.Context, tx Tx, d dialect.Dialect, id int64) (campaign.CampaignState, error) {
	var (
		state     string
		cancelled bool
	)
	found, err := tx.Row(ctx, byDialect[d].state, []any{id}, &state, &cancelled)
	switch {
	case err != nil:
		return "", fmt.Errorf("read campaign %d: %w", id, err)
	case !found:
		return "", fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	case cancelled:
		return campaign.CampaignCancelled, nil
	}
	return campaign.CampaignState(state), nil
}

// Stopped is campaign.ErrPaused or campaign.ErrCancelled when the campaign
// was paused or cancelled — by the operator from another shell, or by
// another runner — and nil while it may be sent.
func Stopped(ctx context.Context, tx Tx, d dialect.Dialect, id int64) error {
	st, err := State(ctx, tx, d, id)
	if err != nil {
		return err
	}
	return st.Stopped()
}

// RefuseCancelled wraps campaign.ErrCancelled when the campaign was
// cancelled: nothing may reopen it.
func RefuseCancelled(ctx context.Context, tx Tx, d dialect.Dialect, id int64) error {
	var cancelled sql.NullInt64
	found, err := tx.Row(ctx, byDialect[d].cancelledAt, []any{id}, &cancelled)
	switch {
	case err != nil:
		return fmt.Errorf("read campaign %d: %w", id, err)
	case !found:
		return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	case cancelled.Valid:
		return fmt.Errorf("campaign %d: %w on %s; a cancelled campaign is final", id, campaign.ErrCancelled,
			rowscan.FromNanos(cancelled.Int64).UTC().Format(time.DateTime+" UTC"))
	}
	return nil
}

// Lock locks a campaign's row for a move where rows are locked: two hosts
// moving one campaign go one after the other, each seeing the other's
// result.
func Lock(ctx context.Context, tx Tx, d dialect.Dialect, id int64) error {
	if q := byDialect[d].lockCampaign; q != "" {
		if _, err := tx.Exec(ctx, q, id); err != nil {
			return fmt.Errorf("lock campaign %d: %w", id, err)
		}
	}
	return nil
}

// Changeable locks a campaign for a change of its settings and refuses a
// cancelled one (RefuseCancelled).
func Changeable(ctx context.Context, tx Tx, d dialect.Dialect, id int64) error {
	if err := Lock(ctx, tx, d, id); err != nil {
		return err
	}
	return RefuseCancelled(ctx, tx, d, id)
}

// SetSchedule changes when a campaign may send: a StartAt other than the
// stored one moves its start (and forgets a start already made, so the
// validity counts from the new one), unless it comes from the same
// relative --at (StartArg) as the stored one; an ExpireAfter other than
// the stored one replaces its validity; a Window replaces the send window
// of a campaign imported with one. Zero fields, and fields equal to the
// stored ones, are left as they are: running the same command again
// changes nothing, and never restarts the validity. DefaultTZ counts at
// import only.
func SetSchedule(ctx context.Context, tx Tx, d dialect.Dialect, id int64, sc campaign.Schedule) error {
	q := &byDialect[d]
	if err := Changeable(ctx, tx, d, id); err != nil {
		return err
	}
	var (
		startAt   sql.NullInt64
		startArg  string
		expire    int64
		hadWindow bool
		wait      = fmt.Sprintf("set send window of campaign %d", id)
		validity  = fmt.Sprintf("set validity of campaign %d", id)
	)
	if _, err := tx.Row(ctx, q.schedule, []any{id}, &startAt, &startArg, &expire, &hadWindow); err != nil {
		return fmt.Errorf("read campaign %d: %w", id, err)
	}
	newStart := !sc.StartAt.IsZero() && (!startAt.Valid || startAt.Int64 != sc.StartAt.UnixNano()) &&
		(sc.StartArg == "" || sc.StartArg != startArg)
	if newStart {
		if err := exec(ctx, tx, "schedule campaign %d", id, q.setStart, sc.StartAt.UnixNano(), sc.StartArg, id); err != nil {
			return err
		}
	}
	if w := sc.Window; w != nil {
		if !hadWindow {
			return fmt.Errorf("campaign %d was imported without a send window, and its recipients' time zones are found at import: %w",
				id, driver.ErrNoZones)
		}
		if err := exec(ctx, tx, "%s", wait, q.setWindow, int64(w.From), int64(w.To), int64(w.Days), id); err != nil {
			return err
		}
		// Rows held for the old window are judged again by the new one.
		if err := exec(ctx, tx, "%s", wait, q.rejudgeWindow, id); err != nil {
			return err
		}
	}
	newExpire := sc.ExpireAfter > 0 && int64(sc.ExpireAfter) != expire
	if newExpire {
		if err := exec(ctx, tx, "%s", validity, q.setExpire, int64(sc.ExpireAfter), id); err != nil {
			return err
		}
	}
	if newStart || newExpire {
		return exec(ctx, tx, "%s", validity, q.setDeadline, id)
	}
	return nil
}

// SetShare changes how a campaign shares the accounts (`campaign set`),
// taking effect at the next claim of every process sending it.
func SetShare(ctx context.Context, tx Tx, d dialect.Dialect, id int64, ch campaign.ShareChange) error {
	if err := Changeable(ctx, tx, d, id); err != nil {
		return err
	}
	c, err := rowscan.Campaign(row{ctx, tx, byDialect[d].campaign, []any{id}})
	if err != nil {
		return fmt.Errorf("campaign %d: %w", id, err)
	}
	sh := ch.Apply(c.Share)
	if err := sh.Validate(); err != nil {
		return fmt.Errorf("campaign %d: %w", id, err)
	}
	return exec(ctx, tx, "campaign %d", id, byDialect[d].setShare, int(sh.Priority), sh.Weight, int64(sh.Borrow), id)
}

// SetPairGap sets how far apart two messages to one person from any of our
// numbers must be, for the claims of a campaign.
func SetPairGap(ctx context.Context, tx Tx, d dialect.Dialect, id int64, gap time.Duration) error {
	if gap < 0 {
		return fmt.Errorf("pair gap %v: must not be negative", gap)
	}
	return exec(ctx, tx, "set the pair gap of campaign %d", id, byDialect[d].setPairGap, int64(gap), id)
}

// row is one row of a query through Tx, for rowscan.
type row struct {
	ctx   context.Context
	tx    Tx
	query string
	args  []any
}

func (r row) Scan(dest ...any) error {
	found, err := r.tx.Row(r.ctx, r.query, r.args, dest...)
	if err == nil && !found {
		return campaign.ErrNotFound
	}
	return err
}

// Pause pauses a running campaign for reason: runners stop claiming within
// seconds, the requests already made finish and are recorded. It returns
// the state the campaign was in; pausing a paused campaign changes nothing,
// and a finished or cancelled one can't be paused (campaign.OperatorPause).
func Pause(ctx context.Context, tx Tx, d dialect.Dialect, id int64, reason string) (campaign.CampaignState, error) {
	return operator(ctx, tx, d, id, campaign.OperatorPause, func() error { return PauseCampaign(ctx, tx, d, id, reason) })
}

// Cancel ends a running or paused campaign for good: its pending rows are
// never sent, its counts stay as they are. It returns the state the
// campaign was in (campaign.OperatorCancel says what may be cancelled).
func Cancel(ctx context.Context, tx Tx, d dialect.Dialect, id int64, now time.Time) (campaign.CampaignState, error) {
	return operator(ctx, tx, d, id, campaign.OperatorCancel, func() error {
		return exec(ctx, tx, "cancel campaign %d", id, byDialect[d].cancel, now.UnixNano(), id)
	})
}

// operator makes the operator's move on a campaign in the state it was in
// when decide allows it, and returns that state.
func operator(ctx context.Context, tx Tx, d dialect.Dialect, id int64, decide func(int64, campaign.CampaignState) (noop bool, err error),
	move func() error) (was campaign.CampaignState, err error) {
	if err := Lock(ctx, tx, d, id); err != nil {
		return "", err
	}
	if was, err = State(ctx, tx, d, id); err != nil {
		return was, err
	}
	if noop, err := decide(id, was); noop || err != nil {
		return was, err
	}
	return was, move()
}

// Resume unpauses a campaign and gives the accounts dropped from it
// another chance: the operator has fixed what stopped them. It returns the
// reason the campaign was paused, "" if it was not.
func Resume(ctx context.Context, tx Tx, d dialect.Dialect, id int64) (string, error) {
	if err := Lock(ctx, tx, d, id); err != nil {
		return "", err
	}
	var state, reason string
	found, err := tx.Row(ctx, byDialect[d].pauseReason, []any{id}, &state, &reason)
	switch {
	case err != nil:
		return "", fmt.Errorf("read campaign %d: %w", id, err)
	case !found:
		return "", fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	}
	if err := RefuseCancelled(ctx, tx, d, id); err != nil {
		return "", err
	}
	if campaign.CampaignState(state) != campaign.CampaignPaused {
		reason = ""
	}
	if err := exec(ctx, tx, "restore accounts of campaign %d", id, byDialect[d].readmitAll, id); err != nil {
		return "", err
	}
	return reason, ResumeCampaign(ctx, tx, d, id)
}

// Delete deletes a campaign with its rows, skipped lines, attempts and the
// counts kept beside it (triggers and ON DELETE CASCADE take most; its
// budget's spend is deleted here). It is refused with driver.ErrInUse while
// a live runner sends it. Whom it messaged is kept (deleted_sends, and the
// send log the portfolio's reach reads): later imports still skip those
// numbers for the same template within 24 h, and for
// --skip-contacted-within, as Meta still counts them.
func Delete(ctx context.Context, tx Tx, d dialect.Dialect, id int64, now time.Time) error {
	q := &byDialect[d]
	if err := Lock(ctx, tx, d, id); err != nil {
		return err
	}
	if _, err := State(ctx, tx, d, id); err != nil {
		return err
	}
	var (
		runner, host string
		pid          int64
	)
	found, err := tx.Row(ctx, q.liveRunner, []any{id, now.Add(-driver.LiveRunner).UnixNano()}, &runner, &host, &pid)
	switch {
	case err != nil:
		return fmt.Errorf("look for runners of campaign %d: %w", id, err)
	case found:
		return fmt.Errorf("campaign %d is being sent by wasend process %d on %s: %w; pause or cancel it first (`wasend campaign pause %d`), then delete it once that run has stopped",
			id, pid, host, driver.ErrInUse, id)
	}
	if err := exec(ctx, tx, "delete campaign %d: keep whom it messaged", id, q.keepSends, id); err != nil {
		return err
	}
	if err := exec(ctx, tx, "delete campaign %d: keep its senders", id, q.foldSends, id); err != nil {
		return err
	}
	// Runners that went silent go with the campaign; campaign_spend has
	// no trigger of its own on SQLite until a first budget.
	for _, del := range q.deletes {
		if err := exec(ctx, tx, "delete campaign %d", id, del, id); err != nil {
			return err
		}
	}
	return nil
}

// Rename gives a campaign a new name (campaign.ValidateName).
func Rename(ctx context.Context, tx Tx, d dialect.Dialect, id int64, name string) error {
	name = strings.TrimSpace(name)
	if err := campaign.ValidateName(name); err != nil {
		return fmt.Errorf("campaign %d: %w", id, err)
	}
	n, err := tx.Exec(ctx, byDialect[d].rename, name, id)
	switch {
	case err != nil:
		return fmt.Errorf("rename campaign %d: %w", id, err)
	case n == 0:
		return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	}
	return nil
}

// RequeueFailed moves failed rows back to pending with a fresh retry
// budget — those with one of codes, or all when codes is empty — and
// reopens the campaign. It returns how many rows moved.
func RequeueFailed(ctx context.Context, tx Tx, d dialect.Dialect, id int64, codes []int, now time.Time) (int64, error) {
	q := &byDialect[d]
	query, args := q.requeueFailed, []any{now.UnixNano(), id}
	if len(codes) > 0 {
		list, err := q.list(codes)
		if err != nil {
			return 0, err
		}
		query, args = q.requeueFailedCodes, append(args, list)
	}
	return requeue(ctx, tx, d, id, "failed", query, args...)
}

// RequeueUnknown moves unknown rows back to pending with a fresh retry
// budget (the operator accepts that some may be sent twice) and reopens
// the campaign.
func RequeueUnknown(ctx context.Context, tx Tx, d dialect.Dialect, id int64, now time.Time) (int64, error) {
	return requeue(ctx, tx, d, id, "unknown", byDialect[d].requeueUnknown, now.UnixNano(), id)
}

// RequeueUndelivered moves sent rows that no webhook reported delivered
// (or read) and that were sent before sentBefore back to pending, with a
// fresh retry budget, and reopens the campaign. Delivered and read rows
// are never requeued.
func RequeueUndelivered(ctx context.Context, tx Tx, d dialect.Dialect, id int64, sentBefore, now time.Time) (int64, error) {
	return requeue(ctx, tx, d, id, "undelivered", byDialect[d].requeueUndelivered, now.UnixNano(), id, sentBefore.UnixNano())
}

func requeue(ctx context.Context, tx Tx, d dialect.Dialect, id int64, what, query string, args ...any) (int64, error) {
	if err := Lock(ctx, tx, d, id); err != nil {
		return 0, err
	}
	n, err := tx.Exec(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("requeue %s rows: %w", what, err)
	}
	return n, Reopen(ctx, tx, d, id, n)
}

// Reopen refuses a cancelled campaign and runs a finished one again when
// moved rows went back to pending.
func Reopen(ctx context.Context, tx Tx, d dialect.Dialect, id, moved int64) error {
	if err := RefuseCancelled(ctx, tx, d, id); err != nil {
		return err
	}
	if moved == 0 {
		return nil
	}
	return ReopenCampaign(ctx, tx, d, id)
}

// RemoveAccount removes the named account: it is no longer listed or used,
// and its name and number are free again. Its history — attempts, sent
// rows, quota resets — is kept under driver.RemovedName. It is refused
// with driver.ErrInUse while a live runner holds rows claimed through it.
func RemoveAccount(ctx context.Context, tx Tx, d dialect.Dialect, name string, now time.Time) error {
	q := &byDialect[d]
	var id int64
	found, err := tx.Row(ctx, q.liveAccount, []any{name}, &id)
	switch {
	case err != nil:
		return fmt.Errorf("read account %s: %w", name, err)
	case !found:
		return fmt.Errorf("account %q: %w", name, campaign.ErrNotFound)
	}
	var (
		camp     sql.NullInt64
		inFlight int64
	)
	if _, err := tx.Row(ctx, q.inFlight, []any{id, now.Add(-driver.LiveRunner).UnixNano()}, &camp, &inFlight); err != nil {
		return fmt.Errorf("look for messages in flight through %s: %w", name, err)
	}
	if inFlight > 0 {
		return fmt.Errorf("account %s: campaign %d has %d message(s) in flight through it: %w; pause the campaign (`wasend campaign pause %d`) or let it finish, then remove the account",
			name, camp.Int64, inFlight, driver.ErrInUse, camp.Int64)
	}
	return exec(ctx, tx, "remove account %s", name, q.removeAccount, now.UnixNano(), driver.RemovedName(name, id), id)
}

// NumberFree is driver.ErrNumberTaken, naming the account, when another
// live account (not id; 0 for a new one) already sends from number: one
// number, one account.
func NumberFree(ctx context.Context, tx Tx, d dialect.Dialect, name, number string, id int64) error {
	var other string
	found, err := tx.Row(ctx, byDialect[d].numberTaken, []any{number, id}, &other)
	switch {
	case err != nil:
		return fmt.Errorf("look up phone number id %s: %w", number, err)
	case found:
		return fmt.Errorf("account %s: phone number id %s is %w by account %s (one number, one account: two would send at twice its rate)",
			name, number, driver.ErrNumberTaken, other)
	}
	return nil
}

// DropAccount stops an account for one campaign, as an account-fatal
// answer or status does: its rows go to the other accounts, and Resume
// gives it another chance. An account already dropped keeps its first
// reason.
func DropAccount(ctx context.Context, tx Tx, d dialect.Dialect, campaignID, accountID int64, reason string, code int, now time.Time) error {
	if _, err := tx.Exec(ctx, byDialect[d].dropAccount, campaignID, accountID, reason, code, now.UnixNano()); err != nil {
		return fmt.Errorf("drop account %d from campaign %d: %w", accountID, campaignID, err)
	}
	return nil
}

// ReadmitAccount takes an account back into a campaign if it was dropped
// with a reason starting with prefix; other drops stay until Resume. It
// reports whether the account was taken back.
func ReadmitAccount(ctx context.Context, tx Tx, d dialect.Dialect, campaignID, accountID int64, prefix string) (bool, error) {
	n, err := tx.Exec(ctx, byDialect[d].readmit, campaignID, accountID, utf8.RuneCountInString(prefix), prefix)
	if err != nil {
		return false, fmt.Errorf("readmit account %d to campaign %d: %w", accountID, campaignID, err)
	}
	return n > 0, nil
}

// SetOutage records (or, with a zero Since, clears) the outage a running
// campaign is waiting out. With pause, the campaign also pauses with the
// reason, if it is still running: the outage lasted too long.
func SetOutage(ctx context.Context, tx Tx, d dialect.Dialect, id int64, o campaign.Outage, pause string) error {
	var since, probe, text any // NULL: no outage
	if !o.Since.IsZero() {
		since, probe, text = o.Since.UnixNano(), rowscan.Nanos(o.NextProbe), o.Error
	}
	n, err := tx.Exec(ctx, byDialect[d].setOutage, since, text, probe, id)
	switch {
	case err != nil:
		return fmt.Errorf("note outage of campaign %d: %w", id, err)
	case n == 0:
		return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	case pause != "":
		return PauseCampaign(ctx, tx, d, id, pause)
	}
	return nil
}

// SetServiceWindow says whether campaign id's rows are checked for an open
// customer service window at each claim (a text campaign without
// --ignore-window).
func SetServiceWindow(ctx context.Context, tx Tx, d dialect.Dialect, id int64, on bool) error {
	check := 0
	if on {
		check = 1
	}
	return exec(ctx, tx, "set the service window check of campaign %d", id, byDialect[d].setServiceWindow, check, id)
}

// The campaign-state moves, one per campaign.CampaignTransition.

// PauseCampaign pauses a running campaign for reason.
func PauseCampaign(ctx context.Context, tx Tx, d dialect.Dialect, id int64, reason string) error {
	return exec(ctx, tx, "pause campaign %d", id, byDialect[d].pause, reason, id)
}

// PauseNoAccount pauses a campaign that has no usable account left.
func PauseNoAccount(ctx context.Context, tx Tx, d dialect.Dialect, id int64) error {
	return exec(ctx, tx, "pause campaign %d", id, byDialect[d].pauseNoAccount, campaign.NoUsableAccountReason, id)
}

// ResumeCampaign runs a paused campaign again.
func ResumeCampaign(ctx context.Context, tx Tx, d dialect.Dialect, id int64) error {
	return exec(ctx, tx, "resume campaign %d", id, byDialect[d].resume, id)
}

// FinishCampaign ends a campaign with no open row.
func FinishCampaign(ctx context.Context, tx Tx, d dialect.Dialect, id int64, now time.Time) error {
	return exec(ctx, tx, "finish campaign %d", id, byDialect[d].finish, now.UnixNano(), id)
}

// ReopenCampaign runs a finished campaign again.
func ReopenCampaign(ctx context.Context, tx Tx, d dialect.Dialect, id int64) error {
	return exec(ctx, tx, "reopen campaign %d", id, byDialect[d].reopen, id)
}

// PauseTemplate pauses, for why, the running campaigns that send a
// template a template status webhook reported paused or disabled (lang ""
// for every language), and says how many.
func PauseTemplate(ctx context.Context, tx Tx, d dialect.Dialect, ev campaign.TemplateEvent, why string) (int, error) {
	n, err := tx.Exec(ctx, byDialect[d].pauseTemplate, why, ev.Template, ev.Lang)
	if err != nil {
		return 0, fmt.Errorf("pause campaigns of template %s: %w", ev.Template, err)
	}
	return int(n), nil
}

// exec runs query and wraps its error with what (one %-verb for subject).
func exec[T any](ctx context.Context, tx Tx, what string, subject T, query string, args ...any) error {
	if _, err := tx.Exec(ctx, query, args...); err != nil {
		return fmt.Errorf(what+": %w", subject, err)
	}
	return nil
}

// statements are this package's SQL in one dialect.
type statements struct {
	state, cancelledAt, pauseReason, lockCampaign string
	liveRunner, keepSends, foldSends              string
	deletes                                       []string
	rename                                        string
	schedule, setStart, setWindow, rejudgeWindow  string
	setExpire, setDeadline                        string
	campaign, setShare, setPairGap                string
	setOutage, setServiceWindow, readmit          string
	requeueFailed, requeueFailedCodes             string
	requeueUnknown, requeueUndelivered            string
	liveAccount, inFlight, removeAccount          string
	numberTaken                                   string
	readmitAll, dropAccount                       string
	pause, pauseNoAccount, resume, finish, reopen string
	cancel, pauseTemplate                         string
	// list is the argument requeueFailedCodes's ?3 takes for codes.
	list func(codes []int) (any, error)
}

var byDialect = dialect.Both(build)

func build(d dialect.Dialect) statements {
	b := d.Bind
	// requeue moves a campaign's rows back to pending with a fresh retry
	// budget, for the operator's requeue transitions.
	requeue := func(t campaign.Transition, set string) string {
		return b(`UPDATE messages SET ` + statesql.To(t) + `, retries = 0, next_attempt_at = 0, runner_id = NULL, ` + set +
			`updated_at = ?1 WHERE campaign_id = ?2 AND ` + statesql.From(t, "state"))
	}
	move := func(t campaign.CampaignTransition, set, where string) string {
		return b(`UPDATE campaigns SET ` + statesql.CampaignTo(t) + `, ` + set + ` WHERE ` + where +
			statesql.CampaignFrom(t, "state"))
	}
	q := statements{
		state:       b(`SELECT state, cancelled_at IS NOT NULL FROM campaigns WHERE id = ?1`),
		cancelledAt: b(`SELECT cancelled_at FROM campaigns WHERE id = ?1`),
		pauseReason: b(`SELECT state, pause_reason FROM campaigns WHERE id = ?1`),
		liveRunner: b(`SELECT id, host, pid FROM runners WHERE campaign_id = ?1 AND heartbeat_at >= ?2
			ORDER BY heartbeat_at DESC LIMIT 1`),
		// The latest send to each number, per template.
		keepSends: b(`INSERT INTO deleted_sends (phone, template, campaign_id, sent_at)
			SELECT m.phone, CASE c.kind WHEN 'template' THEN c.template ELSE '' END, c.id, max(m.sent_at)
			FROM messages m JOIN campaigns c ON c.id = m.campaign_id
			WHERE m.campaign_id = ?1 AND m.state = 'sent' AND m.sent_at IS NOT NULL GROUP BY m.phone, c.kind, c.template, c.id
			ON CONFLICT (phone, template) DO UPDATE SET sent_at = excluded.sent_at, campaign_id = excluded.campaign_id
			WHERE excluded.sent_at > deleted_sends.sent_at`),
		// The sticky senders its accepted sends made, before their attempts
		// go (claimsql.LogClaims reads them).
		foldSends: b(`UPDATE contact_log SET sent_at = ` + d.Greatest("contact_log.sent_at", "v.at") + `
			FROM (SELECT m.phone, a.account_id, max(a.done_at) AS at FROM messages m JOIN attempts a ON a.message_id = m.id
				WHERE m.campaign_id = ?1 AND a.outcome = 'sent' GROUP BY m.phone, a.account_id) AS v
			WHERE contact_log.phone = v.phone AND contact_log.account_id = v.account_id`),
		// attempts, skipped and campaign_accounts go by ON DELETE CASCADE,
		// the counts by the triggers on campaigns.
		deletes: []string{b(`DELETE FROM runners WHERE campaign_id = ?1`), b(`DELETE FROM campaign_spend WHERE campaign_id = ?1`),
			b(`DELETE FROM campaigns WHERE id = ?1`)},
		rename: b(`UPDATE campaigns SET name = ?1 WHERE id = ?2`),

		schedule:  b(`SELECT start_at, start_arg, expire_after, window_from IS NOT NULL FROM campaigns WHERE id = ?1`),
		setStart:  b(`UPDATE campaigns SET start_at = ?1, start_arg = ?2, began_at = NULL WHERE id = ?3`),
		setWindow: b(`UPDATE campaigns SET window_from = ?1, window_to = ?2, window_days = ?3 WHERE id = ?4`),
		rejudgeWindow: b(`UPDATE messages SET next_attempt_at = 0, window_wait = 0
			WHERE campaign_id = ?1 AND state = 'pending' AND window_wait = 1`),
		setExpire: b(`UPDATE campaigns SET expire_after = ?1 WHERE id = ?2`),
		// The deadline from the start as it now stands: --at, else the
		// first claim once made (NULL until then: that claim fixes it).
		setDeadline: b(`UPDATE campaigns SET expires_at = CASE WHEN expire_after > 0
			THEN coalesce(start_at, began_at) + expire_after END WHERE id = ?1`),
		campaign:         b(`SELECT ` + rowscan.CampaignCols + ` FROM campaigns WHERE id = ?1`),
		setShare:         b(`UPDATE campaigns SET priority = ?1, weight = ?2, borrow = ?3 WHERE id = ?4`),
		setPairGap:       b(`UPDATE campaigns SET pair_gap = ?1 WHERE id = ?2`),
		setOutage:        b(`UPDATE campaigns SET outage_since = ?1, outage_error = ?2, outage_probe_at = ?3 WHERE id = ?4`),
		setServiceWindow: b(`UPDATE campaigns SET service_window = ?1 WHERE id = ?2`),
		readmit: b(`DELETE FROM campaign_accounts WHERE campaign_id = ?1 AND account_id = ?2
			AND substr(reason, 1, ?3) = ?4`),

		requeueFailed:  requeue(campaign.MoveRequeueFailed, ``),
		requeueUnknown: requeue(campaign.MoveRequeueUnknown, ``),
		requeueUndelivered: requeue(campaign.MoveRequeueUndelivered, `wamid = NULL, delivery = NULL, delivered_at = NULL, read_at = NULL, `) +
			b(` AND NOT `+statesql.Received("delivery")+` AND sent_at < ?3`),

		liveAccount: b(`SELECT id FROM accounts WHERE name = ?1 AND removed_at IS NULL`),
		numberTaken: b(`SELECT name FROM accounts WHERE phone_number_id = ?1 AND id <> ?2 AND removed_at IS NULL
			ORDER BY id LIMIT 1`),
		inFlight: b(`SELECT min(m.campaign_id), count(*) FROM messages m JOIN runners r ON r.id = m.runner_id
			WHERE m.state = 'sending' AND m.account_id = ?1 AND r.heartbeat_at >= ?2`),
		removeAccount: b(`UPDATE accounts SET removed_at = ?1, disabled = 1, name = ?2 WHERE id = ?3`),
		readmitAll:    b(`DELETE FROM campaign_accounts WHERE campaign_id = ?1`),
		dropAccount: b(`INSERT INTO campaign_accounts (campaign_id, account_id, reason, error_code, at) VALUES (?1, ?2, ?3, ?4, ?5)
			ON CONFLICT DO NOTHING`),

		pause:          move(campaign.CampaignPause, `pause_reason = ?1`, `id = ?2 AND cancelled_at IS NULL AND `),
		pauseNoAccount: move(campaign.CampaignPauseNoAccount, `pause_reason = ?1`, `id = ?2 AND `),
		resume:         move(campaign.CampaignResume, `pause_reason = ''`, `id = ?1 AND `),
		finish:         move(campaign.CampaignFinish, `finished_at = ?1`, `id = ?2 AND `),
		reopen:         move(campaign.CampaignReopen, `finished_at = NULL`, `id = ?1 AND `),
		cancel: move(campaign.CampaignCancel, `finished_at = ?1, cancelled_at = ?1, pause_reason = ''`,
			`id = ?2 AND cancelled_at IS NULL AND `),
		pauseTemplate: move(campaign.CampaignPause, `pause_reason = ?1`,
			`cancelled_at IS NULL AND kind = 'template' AND template = ?2 AND (?3 = '' OR lang = ?3) AND `),
	}
	if d == dialect.Postgres { // SQLite's one writer holds every row already
		q.lockCampaign = `SELECT id FROM campaigns WHERE id = $1 FOR UPDATE`
		q.liveAccount += ` FOR UPDATE`
		q.requeueFailedCodes = q.requeueFailed + ` AND error_code = ANY($3)`
		q.list = func(codes []int) (any, error) {
			list := make([]int64, len(codes))
			for i, c := range codes {
				list[i] = int64(c)
			}
			return list, nil
		}
	} else {
		// One statement text for any number of codes: a JSON array.
		q.requeueFailedCodes = q.requeueFailed + ` AND error_code IN (SELECT value FROM json_each(?3))`
		q.list = func(codes []int) (any, error) {
			b, err := json.Marshal(codes)
			return string(b), err
		}
	}
	return q
}
