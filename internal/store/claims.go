package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
)

// ClaimN claims up to max messages in one transaction, as Claim does for
// one. It returns at least one claim or Claim's errors.
func (s *Store) ClaimN(ctx context.Context, campaignID int64, runner string, now time.Time, max int) ([]campaign.Claim, error) {
	var (
		cs   []campaign.Claim
		kept error
	)
	err := s.writeSend(ctx, func(tx *Tx) error {
		var err error
		cs, err = claim(ctx, tx, campaignID, runner, now, max)
		var we *campaign.WaitError
		if errors.Is(err, campaign.ErrDone) || errors.Is(err, campaign.ErrNoUsableAccount) || errors.As(err, &we) {
			// Commit: the claim marked the campaign finished or paused,
			// failed suppressed rows, recorded a campaign's start, expired
			// rows, or put rows off (the pair gap, a busy sticky number)
			// before it found it must wait. A wait has spent no token.
			kept = err
			return nil
		}
		return err
	})
	if err == nil && kept != nil {
		return nil, kept
	}
	return cs, err
}

func claim(ctx context.Context, tx *Tx, campaignID int64, runner string, now time.Time, max int) ([]campaign.Claim, error) {
	cs, err := claimDue(ctx, tx, campaignID, runner, now, max)
	var we *campaign.WaitError
	if errors.As(err, &we) {
		if ierr := noteIdle(ctx, tx, campaignID, we, now); ierr != nil {
			return nil, ierr
		}
	}
	return cs, err
}

func claimDue(ctx context.Context, tx *Tx, campaignID int64, runner string, now time.Time, max int) ([]campaign.Claim, error) {
	if err := stopped(ctx, tx, campaignID); err != nil {
		return nil, err
	}

	deadline, window, err := begin(ctx, tx, campaignID, now)
	if err != nil {
		return nil, err
	}
	due, err := nextDueInWindow(ctx, tx, campaignID, window, now, max)
	var we *campaign.WaitError
	if errors.As(err, &we) && (we.Reason == campaign.WaitRetry || we.Reason == campaign.WaitWindow) &&
		!deadline.IsZero() && deadline.Before(we.Until) {
		// Rows waiting past the validity expire then, not at their retry.
		we.Until = deadline
	}
	if err != nil {
		return nil, err
	}
	// Rows to send: now the other campaigns on the accounts have their say.
	turn, err := takeTurn(ctx, tx, campaignID, now, len(due))
	if err != nil {
		return nil, err
	}
	due = due[:turn.max]

	accts, err := usableAccounts(ctx, tx, campaignID, now)
	if err != nil {
		return nil, err
	}
	// Suppressed rows fail here and the next due rows are read, until some
	// can be sent: a block of opted-out numbers at the head of the queue
	// costs one claim, and the campaign finishes when nothing else is left.
	msgs, err := dropSuppressed(ctx, tx, due, now)
	for dropped := len(due); err == nil && len(msgs) == 0; dropped += len(due) {
		if tx.send && dropped >= maxDroppedInMemory {
			// A sending transaction keeps what it changes in memory
			// (writeSend): a long block of suppressed rows goes to an
			// ordinary one.
			err = errUnbounded
			break
		}
		if due, err = nextDueInWindow(ctx, tx, campaignID, window, now, turn.max); err == nil {
			msgs, err = dropSuppressed(ctx, tx, due, now)
		}
	}
	if err != nil {
		return nil, err
	}
	var gate claimGate
	if tx.s.shared != nil {
		gate, err = openSharedGate(ctx, tx, campaignID, accts, now)
	} else {
		gate, err = openLocalGate(ctx, tx, campaignID, accts, turn, now)
	}
	if err != nil {
		return nil, err
	}
	// The gate decides each row; what becomes of a refused row (put off,
	// held, skipped, the batch ended) is decided here, from its answer.
	var (
		out []campaign.Claim
		w   = claimWaits{now: now, deadline: deadline}
		// Rows held for full portfolio windows: the claim's wait when
		// nothing else holds it back.
		held   reachHolds
		breaks = map[string]int{}
	)
	if err := gate.read(ctx, tx, msgs); err != nil {
		return nil, err
	}
	putOff := func(m campaign.Message, until time.Time) error {
		if w.deferred.IsZero() || until.Before(w.deferred) {
			w.deferred = until
		}
		return deferMessage(ctx, tx, m.ID, until)
	}
	capHolds := 0
	holdCapped := func(m campaign.Message) error {
		capHolds++
		until := now.Add(capLookAgain)
		if w.heldCap.IsZero() || until.Before(w.heldCap) {
			w.heldCap = until
		}
		return holdRow(ctx, tx, m.ID, until, putOffCap)
	}
	lookAgain := false // the scan stopped with rows due behind those held
	for scanned, read := 0, len(due); ; {
		holds := len(held.rows) + capHolds
	rows:
		for _, m := range msgs {
			a, err := gate.admit(ctx, tx, m, now)
			if err != nil {
				return nil, err
			}
			switch {
			case a.ok:
				if a.broken != "" {
					breaks[a.broken]++
				}
				acct := accts[a.account]
				m.State = campaign.Sending
				m.Attempts++
				out = append(out, campaign.Claim{Message: m, Account: acct.Account, QuotaEpoch: acct.QuotaEpoch, At: now, Shared: a.shared})
			case a.skip:
				if err := skipElsewhere(ctx, tx, m.ID, ElsewhereReason, now); err != nil {
					return nil, err
				}
				w.skipped++
			case a.reason == limits.ReasonPair:
				if err := putOff(m, a.until); err != nil {
					return nil, err
				}
			case a.own:
				// The recipient waits for their number: until its portfolio's
				// window makes room, a while when it is at its cap (a quota
				// reset may come), or for its next token.
				switch until := a.until; {
				case a.holdReach != nil:
					held.add(m.ID, a.holdReach)
				case a.holdCap:
					err = holdCapped(m)
				default:
					if until.IsZero() || !until.After(now) {
						until = now.Add(time.Minute)
					}
					err = putOff(m, until)
				}
				if err != nil {
					return nil, err
				}
			case a.stop:
				break rows // no account can send: nor can it to the next rows
			case a.holdReach != nil:
				// A full window may still take the next rows' recipients. This
				// one waits, unread by claims, until a window can make room,
				// if only the reach (and caps) keep it from every number.
				held.add(m.ID, a.holdReach)
			}
		}
		if len(out) > 0 {
			break
		}
		allHeld := len(held.rows)+capHolds-holds == len(msgs)
		// Nothing sent: the gates' oldest recipients are as read.
		first, err := held.write(ctx, tx, false)
		if err != nil {
			return nil, err
		}
		if w.heldReach.IsZero() || (!first.IsZero() && first.Before(w.heldReach)) {
			w.heldReach = first
		}
		// Every row of a full batch held for the reach or a cap: the rows
		// behind them may go. They are read in this claim, up to a bound;
		// past it the claim ends and the next looks again at once.
		scanned += len(msgs)
		if !allHeld || read < turn.max || len(msgs) == 0 {
			break
		}
		if scanned >= maxHeldScan {
			lookAgain = true
			break
		}
		next, err := nextDueInWindow(ctx, tx, campaignID, window, now, turn.max)
		if errors.As(err, new(*campaign.WaitError)) {
			break
		}
		if err != nil {
			return nil, err
		}
		if msgs, err = dropSuppressed(ctx, tx, next, now); err != nil {
			return nil, err
		}
		if err := gate.read(ctx, tx, msgs); err != nil {
			return nil, err
		}
		read = len(next)
	}
	if lookAgain {
		idle := &campaign.WaitError{Reason: campaign.WaitReach, Until: w.heldReach}
		if w.heldReach.IsZero() {
			idle = &campaign.WaitError{Reason: campaign.WaitCapped}
		}
		if err := noteIdle(ctx, tx, campaignID, idle, now); err != nil {
			return nil, err
		}
		return nil, &campaign.WaitError{Reason: campaign.WaitRetry, Until: now}
	}
	if err := gate.finish(ctx, tx, len(out), w); err != nil {
		return nil, err
	}
	if err := logContacts(ctx, tx, out); err != nil {
		return nil, err
	}
	if _, err := held.write(ctx, tx, true); err != nil {
		return nil, err
	}
	if err := countStickyBreaks(ctx, tx, campaignID, breaks); err != nil {
		return nil, err
	}
	if err := gate.write(ctx, tx); err != nil {
		return nil, err
	}
	if err := turn.took(ctx, tx, len(out)); err != nil {
		return nil, err
	}
	return takeRows(ctx, tx, runner, now, out)
}

// claimGate admits a claim's rows one at a time: this database's limits
// (localGate) or, under --limits, the shared ones (sharedGate). Where the
// two differ by design — holds for the reach and the caps exist only
// locally, a refusal of tokens ends a shared batch — the answer says so.
type claimGate interface {
	// read is told the rows about to be asked for, before the first.
	read(ctx context.Context, tx *Tx, msgs []campaign.Message) error
	// admit decides one row; an admitted row has spent its token.
	admit(ctx context.Context, tx *Tx, m campaign.Message, now time.Time) (answer, error)
	// finish returns the wait of a claim that admitted nothing (n == 0),
	// or nil; it notes what the gate must note either way.
	finish(ctx context.Context, tx *Tx, n int, w claimWaits) error
	// write stores what the claim spent.
	write(ctx context.Context, tx *Tx) error
}

// answer is a gate's word on one row.
type answer struct {
	ok      bool
	account int                   // when ok: the index of the account that sends
	shared  *campaign.SharedClaim // when ok under --limits: what a refund needs
	broken  string                // when ok: why the recipient's sticky number could not send
	// When not ok: the rule that refused, and when to ask again.
	reason ratelimit.Reason
	until  time.Time
	own    bool // the refusal is the recipient's own (sticky) number's: the row waits, the next may go
	// holdReach: hold the row until one of these windows makes room;
	// holdCap: hold it a while for its number's cap (local limits only).
	holdReach []*reachGate
	holdCap   bool
	skip      bool // another host has the recipient: the row is not sent
	stop      bool // no later row of the batch can go either
}

// claimWaits is what a claim's loop put off or held, for the wait of a
// claim that admitted nothing.
type claimWaits struct {
	now, deadline time.Time
	deferred      time.Time // the earliest row put off
	heldReach     time.Time // the earliest row held for the reach
	heldCap       time.Time // the earliest row held for a sticky number's cap
	skipped       int       // rows another host has
}

// takeRows marks the claimed rows sending and logs their attempts, filling
// in each claim's attempt id. One statement per account for the rows, one
// for the attempts, and the counts they change in a few more (tally.go): a
// batch costs a few round trips into SQLite, not several per message,
// whichever gate (local or shared limits) admitted them.
func takeRows(ctx context.Context, tx *Tx, runner string, now time.Time, out []campaign.Claim) ([]campaign.Claim, error) {
	byAccount := map[int64][]any{}
	for _, c := range out {
		byAccount[c.Account.ID] = append(byAccount[c.Account.ID], c.Message.ID)
	}
	for _, c := range out {
		ids, ok := byAccount[c.Account.ID]
		if !ok {
			continue
		}
		delete(byAccount, c.Account.ID)
		if err := claimRows(ctx, tx, c.Account.ID, runner, c.QuotaEpoch, now, ids); err != nil {
			return nil, err
		}
	}
	var t tally
	size := padded(len(out))
	args := make([]any, 0, 5*size)
	for i := range out {
		c := &out[i]
		// A message's first request is tallied here; a later one is left
		// to the trigger, which looks up the requests before it.
		first := c.Message.Attempts == 1
		args = append(args, c.Message.ID, c.Account.ID, now.UnixNano(), first, i)
		t.move(c.Message.CampaignID, c.Message.AccountID, campaign.Pending, c.Account.ID, campaign.Sending)
		if first {
			t.request(c.Message.CampaignID, c.Account.ID, now)
		}
		c.Message.AccountID = c.Account.ID
	}
	for i := len(out); i < size; i++ {
		args = append(args, 0, 0, 0, false, i)
	}
	// In the claims' order (column5), so that their ids are consecutive.
	res, err := tx.ExecContext(ctx, `INSERT INTO attempts (message_id, account_id, claimed_at, tally)
		SELECT column1, column2, column3, column4 FROM (VALUES `+repeated(size, "(?, ?, ?, ?, ?)")+`)
		WHERE column1 <> 0 ORDER BY column5`, args...)
	if err != nil {
		return nil, fmt.Errorf("log attempts: %w", err)
	}
	// The rows of one INSERT get consecutive ids, the last one reported.
	last, err := res.LastInsertId()
	if err != nil {
		return nil, fmt.Errorf("log attempts: %w", err)
	}
	for i := range out {
		out[i].AttemptID = last - int64(len(out)-1-i)
	}
	if err := t.write(ctx, tx); err != nil {
		return nil, err
	}
	return out, nil
}

// expireBy is until, or the campaign's validity deadline when that comes
// first: rows put off past it (the pair gap, a full portfolio) expire then.
func expireBy(until, deadline time.Time) time.Time {
	if !deadline.IsZero() && (until.IsZero() || deadline.Before(until)) {
		return deadline
	}
	return until
}

// reachFreesAt is the earliest instant a portfolio that refused a
// recipient in this claim has room again; zero when none refused.
func reachFreesAt(gates []*reachGate) time.Time {
	var at time.Time
	for _, g := range gates {
		if g.blocked {
			if f := ratelimit.FreesAt(g.oldest); at.IsZero() || f.Before(at) {
				at = f
			}
		}
	}
	return at
}

// AllowedRate is how many messages per second the campaign's usable
// accounts may send at now: the sum of their effective rates (after
// throttling), leaving out accounts resting, restricted or at their daily
// cap, within the global limit when it is on. The engine sizes its
// requests in flight by it (dispatch.RateReporter); claims never rely on it.
func (s *Store) AllowedRate(ctx context.Context, campaignID int64, now time.Time) (float64, error) {
	accts, err := loadAccounts(ctx, s.db, `WHERE a.disabled = 0 AND a.id NOT IN
		(SELECT account_id FROM campaign_accounts WHERE campaign_id = ?)`, campaignID)
	if err != nil {
		return 0, err
	}
	var rate float64
	for _, a := range accts {
		if a.UsedToday >= a.Limits.DailyCap || now.Before(a.health.CooldownUntil) {
			continue
		}
		rate += a.limit(now).Rate
	}
	var (
		globalOn   bool
		globalRate float64
	)
	if err := s.db.QueryRowContext(ctx, `SELECT enabled, rate FROM global_limit WHERE id = 1`).Scan(&globalOn, &globalRate); err != nil {
		return 0, fmt.Errorf("read global limit: %w", err)
	}
	if globalOn {
		rate = min(rate, globalRate)
	}
	return rate, nil
}

// usableAccounts returns the enabled accounts not dropped from the
// campaign. When accounts exist but every one was dropped, it pauses the
// campaign and returns ErrNoUsableAccount.
func usableAccounts(ctx context.Context, tx *Tx, campaignID int64, now time.Time) ([]account, error) {
	accts, err := loadAccounts(ctx, tx, `WHERE a.disabled = 0 AND a.id NOT IN
		(SELECT account_id FROM campaign_accounts WHERE campaign_id = ?) ORDER BY a.id`, campaignID)
	if err != nil || len(accts) > 0 {
		return accts, err
	}
	var enabled int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM accounts WHERE disabled = 0 AND removed_at IS NULL`).Scan(&enabled); err != nil {
		return nil, fmt.Errorf("count accounts: %w", err)
	}
	if enabled == 0 {
		return nil, &campaign.WaitError{Reason: campaign.WaitNoAccount}
	}
	if err := pauseNoAccount(ctx, tx, campaignID); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: %w", campaign.ErrPaused, campaign.ErrNoUsableAccount)
}

// maxDroppedInMemory bounds the suppressed rows a sending transaction
// fails before it runs again as an ordinary write (see writeSend).
const maxDroppedInMemory = 2048

// dueMessage is a pending row with the suppression list's word on it.
type dueMessage struct {
	campaign.Message
	suppressed sql.NullString // the reason, when the number is on the list
}

// dropSuppressed fails the rows whose number is on the suppression list —
// checked again just before sending, since a number may have been added
// since the import — and returns the others.
func dropSuppressed(ctx context.Context, tx *Tx, due []dueMessage, now time.Time) ([]campaign.Message, error) {
	out := make([]campaign.Message, 0, len(due))
	for _, d := range due {
		if !d.suppressed.Valid {
			out = append(out, d.Message)
			continue
		}
		why := d.suppressed.String
		if why == "" {
			why = "opted out"
		}
		if err := suppressAtSend(ctx, tx, d.ID, why, now); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// nextDue returns up to max pending rows whose retry time has come, or the
// reason there are none.
func nextDue(ctx context.Context, tx *Tx, campaignID int64, now time.Time, max int) ([]dueMessage, error) {
	// The suppression list is read in the same query: it is consulted
	// before every send, at no extra round trip.
	rows, err := tx.QueryContext(ctx, `SELECT id, line, input, phone, params, body, extras, attempts, retries,
		coalesce(account_id, 0), (SELECT reason FROM suppressions s WHERE s.phone = messages.phone)
		FROM messages WHERE campaign_id = ? AND state = 'pending' AND next_attempt_at <= ?
		ORDER BY next_attempt_at, id LIMIT ?`, campaignID, now.UnixNano(), max)
	if err != nil {
		return nil, fmt.Errorf("find next messages: %w", err)
	}
	var out []dueMessage
	for rows.Next() {
		var (
			d      dueMessage
			m      = &d.Message
			params string
			extras string
		)
		if err := rows.Scan(&m.ID, &m.Line, &m.Input, &m.Phone, &params, &m.Body, &extras, &m.Attempts, &m.Retries, &m.AccountID, &d.suppressed); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read message: %w", err)
		}
		m.CampaignID = campaignID
		if err := json.Unmarshal([]byte(params), &m.Params); err != nil {
			rows.Close()
			return nil, fmt.Errorf("message %d params: %w", m.ID, err)
		}
		if err := unmarshalExtras(extras, m); err != nil {
			rows.Close()
			return nil, fmt.Errorf("message %d extras: %w", m.ID, err)
		}
		out = append(out, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find next messages: %w", err)
	}
	if len(out) > 0 {
		return out, nil
	}
	var next sql.NullInt64
	var sending int
	if err := tx.QueryRowContext(ctx, `SELECT min(CASE WHEN state = 'pending' THEN next_attempt_at END),
		count(CASE WHEN state = 'sending' THEN 1 END)
		FROM messages WHERE campaign_id = ? AND state IN ('pending', 'sending')`, campaignID).Scan(&next, &sending); err != nil {
		return nil, fmt.Errorf("find next retry: %w", err)
	}
	switch {
	case next.Valid:
		we := &campaign.WaitError{Reason: campaign.WaitRetry, Until: fromNanos(next.Int64)}
		if err := heldWait(ctx, tx, campaignID, we); err != nil {
			return nil, err
		}
		return nil, we
	case sending > 0:
		return nil, &campaign.WaitError{Reason: campaign.WaitInFlight}
	}
	if err := finishCampaign(ctx, tx, campaignID, now); err != nil {
		return nil, err
	}
	return nil, campaign.ErrDone
}

// RecordAll stores several outcomes in one transaction (a group commit).
func (s *Store) RecordAll(ctx context.Context, runner string, rs []campaign.Result) error {
	return s.writeSend(ctx, func(tx *Tx) error { return recordAll(ctx, tx, runner, rs) })
}

func recordAll(ctx context.Context, tx *Tx, runner string, rs []campaign.Result) error {
	var (
		plain  []campaign.Result
		wamids []any
	)
	for _, r := range rs {
		if r.Outcome.Kind == campaign.OutcomeSent && r.Outcome.WAMID != "" {
			wamids = append(wamids, r.Outcome.WAMID)
		}
		if plainSent(r) {
			plain = append(plain, r)
			continue
		}
		if err := record(ctx, tx, r.Claim, runner, r.Outcome, r.At); err != nil {
			return err
		}
	}
	if err := recordSent(ctx, tx, plain); err != nil {
		return err
	}
	return linkWaitingStatuses(ctx, tx, wamids)
}

// RecordAndClaimN stores outcomes as RecordAll does and, in the same
// transaction, claims up to max more of the campaign's due messages as
// ClaimN does: one commit where there were two. err is RecordAll's: when
// it is not nil, nothing was stored. The outcomes are kept whatever the
// claim finds; when it claims nothing, claimErr says why as ClaimN's error
// would.
func (s *Store) RecordAndClaimN(ctx context.Context, runner string, rs []campaign.Result, campaignID int64, now time.Time, max int) (cs []campaign.Claim, claimErr error, err error) {
	var kept error
	err = s.writeSend(ctx, func(tx *Tx) error {
		cs, kept = nil, nil // a retried transaction starts over
		if err := recordAll(ctx, tx, runner, rs); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `SAVEPOINT claim`); err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		var err error
		cs, err = claim(ctx, tx, campaignID, runner, now, max)
		switch {
		case errors.Is(err, errUnbounded):
			return err // the whole transaction again, as an ordinary write
		case err == nil, errors.Is(err, campaign.ErrDone), errors.Is(err, campaign.ErrNoUsableAccount):
			// Kept, as ClaimN keeps them: the claim may have marked the
			// campaign finished or paused.
			kept = err
		default:
			// Whatever the claim wrote goes, as ClaimN's rollback drops
			// it; the outcomes stay.
			if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO claim`); rerr != nil {
				return fmt.Errorf("claim: %w", rerr)
			}
			cs, kept = nil, err
		}
		if _, err := tx.ExecContext(ctx, `RELEASE claim`); err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return cs, kept, nil
}

// plainSent reports whether r is a message accepted with nothing more to
// it: what most outcomes are, and what recordSent stores in bulk.
func plainSent(r campaign.Result) bool {
	o := r.Outcome
	return o.Kind == campaign.OutcomeSent && r.Claim.AttemptID != 0 && o.ErrorCode == 0 && !o.Refund &&
		o.Throttle == nil && o.Restrict == 0 && !o.DropAccount && o.Pause == "" && !o.Suppress
}

// padded is the size a multi-row statement of the sending path takes for
// n rows: 8, then steps of 32. The rest are padding rows that match or
// insert nothing (id 0), so a few prepared statements serve every batch;
// one for each exact size was a statement prepared, twice (database/sql
// prepares on the pool, then on the writer), in most transactions. A
// padding row costs its arguments and a lookup.
func padded(n int) int {
	if n <= 8 {
		return 8
	}
	return (n + 31) / 32 * 32
}

// maxSentBatch bounds the outcomes recordSent stores in one statement.
const maxSentBatch = 256

// recordSent stores what record stores for plain sent outcomes, two
// statements per batch instead of two per message. A row no longer
// 'sending' (or 'unknown') is left alone, as record leaves it.
func recordSent(ctx context.Context, tx *Tx, rs []campaign.Result) error {
	for len(rs) > 0 {
		n := min(len(rs), maxSentBatch)
		size := padded(n)
		msgArgs := make([]any, 0, 4*size)
		attArgs := make([]any, 0, 3*size)
		logArgs := make([]any, 0, 3*size)
		for i := range size {
			if i >= n {
				msgArgs = append(msgArgs, 0, "", 0, 0)
				attArgs = append(attArgs, 0, 0, "")
				logArgs = append(logArgs, 0, "", 0)
				continue
			}
			r := rs[i]
			msgArgs = append(msgArgs, r.Claim.Message.ID, r.Outcome.WAMID, r.At.UnixNano(), r.Claim.Account.ID)
			attArgs = append(attArgs, r.Claim.AttemptID, r.At.UnixNano(), r.Outcome.Class)
			logArgs = append(logArgs, r.Claim.Account.ID, r.Claim.Message.Phone, r.At.UnixNano())
		}
		if err := recordSentMany(ctx, tx, rs[:n], size, msgArgs, attArgs); err != nil {
			return fmt.Errorf("record %d messages sent: %w", n, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE contact_log SET sent_at = max(sent_at, v.column3)
			FROM (VALUES `+repeated(size, "(?, ?, ?)")+`) AS v
			WHERE contact_log.account_id = v.column1 AND contact_log.phone = v.column2`, logArgs...); err != nil {
			return fmt.Errorf("log %d sends: %w", n, err)
		}
		rs = rs[n:]
	}
	return nil
}

func record(ctx context.Context, tx *Tx, c campaign.Claim, runner string, o campaign.Outcome, now time.Time) error {
	var outcome string
	switch o.Kind {
	case campaign.OutcomeSent:
		outcome = "sent"
	case campaign.OutcomeRetry:
		outcome = "retry"
	case campaign.OutcomeFailed:
		outcome = "failed"
	case campaign.OutcomeUnknown:
		outcome = "unknown"
	default:
		return fmt.Errorf("record message %d: unknown outcome %d", c.Message.ID, o.Kind)
	}
	code := sql.NullInt64{Int64: int64(o.ErrorCode), Valid: o.ErrorCode != 0}
	res, err := recordOutcome(ctx, tx, c, runner, o, now)
	if err != nil {
		return fmt.Errorf("record message %d %s: %w", c.Message.ID, outcome, err)
	}
	// A row no longer ours was declared unknown by a recovering runner:
	// leave it as the operator sees it, but what the answer says about the
	// account and campaign is still true.
	if n, _ := res.RowsAffected(); n > 0 && o.Refund {
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET used_today = max(used_today - 1, 0)
			WHERE id = ? AND quota_epoch = ?`, c.Account.ID, c.QuotaEpoch); err != nil {
			return fmt.Errorf("refund quota of %s: %w", c.Account.Name, err)
		}
		if err := unlogContact(ctx, tx, c); err != nil {
			return err
		}
		if c.Shared != nil {
			if err := queueRefund(ctx, tx, c.Shared, now); err != nil {
				return err
			}
		}
	}
	if n, _ := res.RowsAffected(); n > 0 && o.Kind == campaign.OutcomeSent {
		if _, err := tx.ExecContext(ctx, `UPDATE contact_log SET sent_at = max(sent_at, ?) WHERE account_id = ? AND phone = ?`,
			now.UnixNano(), c.Account.ID, c.Message.Phone); err != nil {
			return fmt.Errorf("log the send to %s: %w", c.Message.Phone, err)
		}
	}
	if err := applyEffects(ctx, tx, c, o, now); err != nil {
		return err
	}
	if c.AttemptID != 0 {
		_, err = tx.ExecContext(ctx, `UPDATE attempts SET done_at = ?, outcome = ?, error_code = ?, class = ?
			WHERE id = ?`, now.UnixNano(), outcome, code, o.Class, c.AttemptID)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE attempts SET done_at = ?, outcome = ?, error_code = ?, class = ?
			WHERE id = (SELECT max(id) FROM attempts WHERE message_id = ?)`, now.UnixNano(), outcome, code, o.Class, c.Message.ID)
	}
	if err != nil {
		return fmt.Errorf("log attempt outcome: %w", err)
	}
	return nil
}

// applyEffects carries out what an answer means beyond its row: an account
// that rests or is dropped, a campaign that pauses, a number suppressed.
func applyEffects(ctx context.Context, tx *Tx, c campaign.Claim, o campaign.Outcome, now time.Time) error {
	acct := c.Account
	if o.ErrorCode != 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET last_error_code = ? WHERE id = ?`, o.ErrorCode, acct.ID); err != nil {
			return fmt.Errorf("note error of %s: %w", acct.Name, err)
		}
	}
	if o.Throttle != nil {
		where, args := `WHERE a.id = ?`, []any{acct.ID}
		if o.Throttle.App {
			where, args = `WHERE a.disabled = 0`, nil
		}
		accts, err := loadAccounts(ctx, tx, where, args...)
		if err != nil {
			return err
		}
		for _, a := range accts {
			h := a.health.Throttled(now, o.Throttle.Cooldown, o.Throttle.Hint)
			// Book the tokens earned at the old rate before it halves.
			b := a.bucket().Relimit(a.limit(now), h.Scale(bucketLimit(a.Limits), now), now)
			if _, err := tx.ExecContext(ctx, `UPDATE accounts SET cooldown_until = ?, throttle_streak = ?,
				last_throttle_at = ?, rate_factor = ?, rate_factor_at = ?, tokens = ?, tokens_at = ? WHERE id = ?`,
				nanos(h.CooldownUntil), h.Streak, nanos(h.LastThrottle), h.Factor, nanos(h.FactorSince),
				b.Tokens, nanos(b.At), a.ID); err != nil {
				return fmt.Errorf("cool down %s: %w", a.Name, err)
			}
		}
	}
	if o.Restrict > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET cooldown_until = max(cooldown_until, ?), restriction = ?
			WHERE id = ?`, now.Add(o.Restrict).UnixNano(), o.Error, acct.ID); err != nil {
			return fmt.Errorf("restrict %s: %w", acct.Name, err)
		}
	}
	if o.DropAccount {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO campaign_accounts (campaign_id, account_id, reason, error_code, at)
			VALUES (?, ?, ?, ?, ?)`, c.Message.CampaignID, acct.ID, o.Error, o.ErrorCode, now.UnixNano()); err != nil {
			return fmt.Errorf("drop %s from campaign: %w", acct.Name, err)
		}
	}
	if o.Pause != "" {
		if err := pauseCampaign(ctx, tx, c.Message.CampaignID, o.Pause); err != nil {
			return err
		}
	}
	if err := demoteOnTrouble(ctx, tx, acct.ID, o, now); err != nil {
		return err
	}
	if o.Suppress {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO suppressions (phone, reason, created_at) VALUES (?, ?, ?)`,
			c.Message.Phone, fmt.Sprintf("error %d in campaign %d", o.ErrorCode, c.Message.CampaignID), now.UnixNano()); err != nil {
			return fmt.Errorf("suppress %s: %w", c.Message.Phone, err)
		}
	}
	return nil
}

// RegisterRunner announces a sender process working on a campaign.
func (s *Store) RegisterRunner(ctx context.Context, r campaign.Runner) error {
	return s.write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO runners (id, campaign_id, host, pid, pid_space, started_at, heartbeat_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, r.ID, r.CampaignID, r.Host, r.PID, r.Space, nanos(r.StartedAt), nanos(r.HeartbeatAt))
		if err != nil {
			return fmt.Errorf("register runner: %w", err)
		}
		return nil
	})
}

// Heartbeat marks a runner alive at now. It returns an error wrapping
// campaign.ErrNotFound when the runner is not registered (another process
// took it for dead): the caller registers again, or its next claims would
// be orphans at once.
func (s *Store) Heartbeat(ctx context.Context, id string, now time.Time) error {
	return s.write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runners SET heartbeat_at = ? WHERE id = ?`, now.UnixNano(), id)
		if err != nil {
			return fmt.Errorf("heartbeat of runner %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("heartbeat of runner %s: %w", id, campaign.ErrNotFound)
		}
		return nil
	})
}

// UnregisterRunner removes a runner that stopped cleanly.
func (s *Store) UnregisterRunner(ctx context.Context, id string) error {
	return s.write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM runners WHERE id = ?`, id)
		return err
	})
}

// RecoverOrphans turns rows left in 'sending' by runners that are gone into
// 'unknown': their request may have reached the API, so they are not resent
// without an operator's decision. dead says whether a runner is gone; rows
// whose runner is not registered at all are always orphans. It returns how
// many rows it moved of each campaign: rows of any campaign are moved, and
// each is its own campaign's to resend.
func (s *Store) RecoverOrphans(ctx context.Context, now time.Time, dead func(campaign.Runner) bool) (map[int64]int, error) {
	return recoverOrphans(ctx, s, 0, now, dead)
}

// Rescue is RecoverOrphans for one campaign's rows, cheap enough for a
// running engine to call every few seconds (it reads the rows through the
// campaign's index): a process that died mid-run blocks the others only
// until its runner counts as dead. Dead runners of any campaign are
// unregistered.
func (s *Store) Rescue(ctx context.Context, campaignID int64, now time.Time, dead func(campaign.Runner) bool) (int, error) {
	if campaignID <= 0 {
		return 0, fmt.Errorf("rescue: campaign id %d: %w", campaignID, campaign.ErrNotFound)
	}
	moved, err := recoverOrphans(ctx, s, campaignID, now, dead)
	return moved[campaignID], err
}

// orphanedNote is what an orphaned row's error message says.
const orphanedNote = "interrupted: the request may have reached the API, so it is not resent automatically"

// recoverOrphans does RecoverOrphans (campaignID 0: every campaign) and
// Rescue.
func recoverOrphans(ctx context.Context, s *Store, campaignID int64, now time.Time, dead func(campaign.Runner) bool) (map[int64]int, error) {
	var moved map[int64]int
	err := s.write(ctx, func(tx *Tx) error {
		moved = map[int64]int{}
		rows, err := tx.QueryContext(ctx, `SELECT id, campaign_id, host, pid, pid_space, started_at, heartbeat_at FROM runners`)
		if err != nil {
			return fmt.Errorf("list runners: %w", err)
		}
		var gone []string
		for rows.Next() {
			var r campaign.Runner
			var started, beat int64
			if err := rows.Scan(&r.ID, &r.CampaignID, &r.Host, &r.PID, &r.Space, &started, &beat); err != nil {
				rows.Close()
				return fmt.Errorf("list runners: %w", err)
			}
			r.StartedAt, r.HeartbeatAt = fromNanos(started), fromNanos(beat)
			if dead(r) {
				gone = append(gone, r.ID)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("list runners: %w", err)
		}
		for _, id := range gone {
			if _, err := tx.ExecContext(ctx, `DELETE FROM runners WHERE id = ?`, id); err != nil {
				return fmt.Errorf("remove dead runner: %w", err)
			}
		}
		movedIDs, err := rescue(ctx, tx, campaignID, now, moved)
		if err != nil {
			return err
		}
		for len(movedIDs) > 0 {
			n := min(len(movedIDs), 500)
			if _, err := tx.ExecContext(ctx, `UPDATE attempts SET done_at = ?, outcome = 'unknown'
				WHERE done_at IS NULL AND message_id IN (`+repeated(n, "?")+`)`,
				append([]any{now.UnixNano()}, movedIDs[:n]...)...); err != nil {
				return fmt.Errorf("close orphaned attempts: %w", err)
			}
			movedIDs = movedIDs[n:]
		}
		return nil
	})
	return moved, err
}

// repeated is n copies of one, comma-separated.
func repeated(n int, one string) string {
	return strings.TrimSuffix(strings.Repeat(one+", ", n), ", ")
}
