// Package claim decides which of a campaign's due rows go now and from
// which number: the row side (schedule, send window, priority turn,
// suppression, holds) and one loop that asks a gate per row — this
// database's limits (limits.Decide over a snapshot read once) or, under
// --limits, the shared ones (limits.Gate) — and handles every answer in one
// place. The store executes: every read and write goes through
// driver.ClaimTx, inside the one transaction the store opens.
package claim

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

// Ledger is a store driver with the claim on top: what the engine needs
// (dispatch.Ledger, RecordClaimer, RateReporter).
type Ledger struct {
	driver.Driver
}

// New puts the claim on top of d.
func New(d driver.Driver) *Ledger { return &Ledger{Driver: d} }

// Holders are the runners other than self holding the campaign's rows in
// flight (dispatch.HolderLister): a read model, on the driver's Reader.
func (l *Ledger) Holders(ctx context.Context, campaignID int64, self string) ([]campaign.Runner, error) {
	return readmodel.New(l.Driver).Holders(ctx, campaignID, self)
}

// ClaimN claims up to max due messages of the campaign for runner at now in
// one transaction, each with a token and a daily-cap unit of the account it
// goes out on. It returns at least one claim, or why none: a
// *campaign.WaitError, campaign.ErrDone, ErrPaused, ErrNotFound.
func (l *Ledger) ClaimN(ctx context.Context, campaignID int64, runner string, now time.Time, max int) ([]campaign.Claim, error) {
	var (
		cs   []campaign.Claim
		kept error
	)
	err := l.WithClaim(ctx, func(tx driver.ClaimTx) error {
		var err error
		cs, kept = nil, nil // a retried transaction starts over
		cs, err = claim(ctx, tx, campaignID, runner, now, max, 0)
		if keep(err) {
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

// keep says whether a claim that ended with err commits what it wrote.
func keep(err error) bool {
	var we *campaign.WaitError
	return errors.Is(err, campaign.ErrDone) || errors.Is(err, campaign.ErrNoUsableAccount) || errors.As(err, &we)
}

// RecordAndClaimN stores outcomes as RecordAll does and, in the same
// transaction, claims up to max more of the campaign's due messages as
// ClaimN does: one commit where there were two. err is RecordAll's: when
// it is not nil, nothing was stored — but a *campaign.FenceError (some
// outcomes refused by their fence) comes with the rest stored and the
// claims made. The outcomes are kept whatever the claim finds; when it
// claims nothing, claimErr says why as ClaimN's error would. The first
// start claims are marked started in the transaction (Claim.Started): the
// caller holds a place in flight for each, so their requests are made at
// once, without a Start.
func (l *Ledger) RecordAndClaimN(ctx context.Context, runner string, rs []campaign.Result, campaignID int64, now time.Time, max, start int) (cs []campaign.Claim, claimErr error, err error) {
	var kept error
	claimErr, err = l.RecordWithClaim(ctx, runner, rs, func(tx driver.ClaimTx) error {
		cs, kept = nil, nil // a retried transaction starts over
		var err error
		cs, err = claim(ctx, tx, campaignID, runner, now, max, start)
		if err == nil || (keep(err) && !isWait(err)) {
			// Kept, as ClaimN keeps them: the claim may have marked the
			// campaign finished or paused.
			kept = err
			return nil
		}
		// Whatever the claim wrote goes, as ClaimN's rollback drops it;
		// the outcomes stay.
		cs = nil
		return err
	})
	var fenced *campaign.FenceError
	if err != nil && !errors.As(err, &fenced) {
		return nil, nil, err
	}
	// A FenceError stored everything else and claimed: it comes with the
	// claims.
	if claimErr != nil {
		return nil, claimErr, err
	}
	return cs, kept, err
}

func isWait(err error) bool {
	var we *campaign.WaitError
	return errors.As(err, &we)
}

// claim claims up to max rows, the first start of them marked started.
func claim(ctx context.Context, tx driver.ClaimTx, campaignID int64, runner string, now time.Time, max, start int) ([]campaign.Claim, error) {
	cs, err := claimDue(ctx, tx, campaignID, runner, now, max, start)
	var we *campaign.WaitError
	if errors.As(err, &we) {
		if ierr := noteIdle(ctx, tx, campaignID, we, now); ierr != nil {
			return nil, ierr
		}
	}
	return cs, err
}

func claimDue(ctx context.Context, tx driver.ClaimTx, campaignID int64, runner string, now time.Time, max, start int) ([]campaign.Claim, error) {
	if err := tx.Stopped(ctx, campaignID); err != nil {
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
	if err := heldStop(ctx, tx, campaignID, now); err != nil {
		return nil, err
	}
	accts, err := usableAccounts(ctx, tx, campaignID)
	if err != nil {
		return nil, err
	}
	// Rows to send: now the other campaigns on the accounts have their say.
	mine := make([]int64, len(accts))
	for i, a := range accts {
		mine[i] = a.ID
	}
	turn, err := takeTurn(ctx, tx, campaignID, mine, now, len(due))
	if err != nil {
		return nil, err
	}
	due = due[:turn.max]
	usable := accts
	if turn.only != nil {
		accts = slices.DeleteFunc(accts, func(a driver.ClaimAccount) bool { return !slices.Contains(turn.only, a.ID) })
	}
	// Suppressed rows fail here and the next due rows are read, until some
	// can be sent: a block of opted-out numbers at the head of the queue
	// costs one claim, and the campaign finishes when nothing else is left.
	// (In a sending transaction the store bounds how many.)
	sw, err := openServiceWindow(ctx, tx, campaignID, usable, accts)
	if err != nil {
		return nil, err
	}
	msgs, err := dropUnsendable(ctx, tx, sw, due, now)
	for err == nil && len(msgs) == 0 {
		if due, err = nextDueInWindow(ctx, tx, campaignID, window, now, turn.max); err == nil {
			msgs, err = dropUnsendable(ctx, tx, sw, due, now)
		}
	}
	if err != nil {
		return nil, err
	}
	global, err := tx.Global(ctx)
	if err != nil {
		return nil, err
	}
	var g gate
	if sh := tx.Shared(); sh != nil {
		g, err = openSharedGate(ctx, tx, sh, campaignID, accts, global, now)
	} else {
		// The claim's instant is never before a bucket's stamp: a claim
		// whose now was taken before it waited for the write lock would
		// otherwise spend tokens in the past, and the next claim would
		// earn them again.
		now = notBefore(now, accts, global)
		g, err = openLocalGate(ctx, tx, campaignID, accts, global, turn, now)
	}
	if err != nil {
		return nil, err
	}
	// The gate decides each row; what becomes of a refused row (put off,
	// held, skipped, the batch ended) is decided here, from its answer.
	var (
		out []campaign.Claim
		w   = waits{now: now, deadline: deadline}
		// Rows held for full portfolio windows: the claim's wait when
		// nothing else holds it back.
		held   reachHolds
		breaks = map[string]int{}
	)
	if err := g.read(ctx, tx, msgs); err != nil {
		return nil, err
	}
	out = make([]campaign.Claim, 0, len(msgs)) // a claim is large: no regrowth
	bud, err := readBudget(ctx, tx, campaignID, msgs, nil)
	if err != nil {
		return nil, err
	}
	var overBudget campaign.Message // the first row the budget refused
	putOff := func(m campaign.Message, until time.Time) error {
		if w.deferred.IsZero() || until.Before(w.deferred) {
			w.deferred = until
		}
		return tx.PutOff(ctx, m.ID, until, driver.PutOffNone)
	}
	capHolds := 0
	holdCapped := func(m campaign.Message) error {
		capHolds++
		until := now.Add(capLookAgain)
		if w.heldCap.IsZero() || until.Before(w.heldCap) {
			w.heldCap = until
		}
		return tx.PutOff(ctx, m.ID, until, driver.PutOffCap)
	}
	lookAgain := false // the scan stopped with rows due behind those held
	for scanned, read := 0, len(due); ; {
		holds := len(held.rows) + capHolds
	rows:
		for _, m := range msgs {
			if !bud.fits(m) {
				overBudget = m
				break rows // in order: a cheaper row behind it does not jump the queue
			}
			a, err := g.admit(ctx, tx, m, sw.accounts(m.ID), now)
			if err != nil {
				return nil, err
			}
			switch {
			case a.ok:
				if a.broken != "" {
					breaks[a.broken]++
				}
				acct := accts[a.account]
				bud.take(m)
				m.State = campaign.Sending
				m.Attempts++
				out = append(out, campaign.Claim{Message: m, Account: acct.Account, QuotaEpoch: acct.QuotaEpoch, Fence: int64(m.Attempts),
					At: now, Shared: a.shared})
			case a.skip:
				if err := tx.SkipElsewhere(ctx, m.ID, ElsewhereReason, now); err != nil {
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
		if bud.hit {
			return nil, bud.refused(overBudget)
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
		if msgs, err = dropUnsendable(ctx, tx, sw, next, now); err != nil {
			return nil, err
		}
		if err := g.read(ctx, tx, msgs); err != nil {
			return nil, err
		}
		if bud, err = readBudget(ctx, tx, campaignID, msgs, bud); err != nil {
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
	if err := g.finish(ctx, tx, len(out), w); err != nil {
		return nil, err
	}
	for i := range min(start, len(out)) {
		out[i].Started = true
	}
	// The send log names each claim's attempt (claimsql.LogClaims), and
	// the holds below read it.
	if out, err = tx.Take(ctx, runner, now, out); err != nil {
		return nil, err
	}
	if err := tx.LogContacts(ctx, out); err != nil {
		return nil, err
	}
	if _, err := held.write(ctx, tx, true); err != nil {
		return nil, err
	}
	if err := tx.CountStickyBreaks(ctx, campaignID, breaks); err != nil {
		return nil, err
	}
	if err := g.write(ctx, tx); err != nil {
		return nil, err
	}
	if err := turn.took(ctx, tx, len(out)); err != nil {
		return nil, err
	}
	return out, nil
}

// notBefore is now, or the latest stamp of the buckets a claim may spend
// from when that is later.
func notBefore(now time.Time, accts []driver.ClaimAccount, global driver.GlobalBucket) time.Time {
	for _, a := range accts {
		if a.At.After(now) {
			now = a.At
		}
	}
	if global.On && global.Bucket.At.After(now) {
		now = global.Bucket.At
	}
	return now
}

// gate admits a claim's rows one at a time: this database's limits
// (localGate) or, under --limits, the shared ones (sharedGate). Where the
// two differ by design — holds for the reach and the caps exist only
// locally, a refusal of tokens ends a shared batch — the answer says so.
type gate interface {
	// read is told the rows about to be asked for, before the first.
	read(ctx context.Context, tx driver.ClaimTx, msgs []campaign.Message) error
	// admit decides one row; an admitted row has spent its token. only,
	// when not nil, says which accounts may send it (the customer service
	// window's): a refusal among those is the row's own, as a sticky
	// number's is.
	admit(ctx context.Context, tx driver.ClaimTx, m campaign.Message, only accountMask, now time.Time) (answer, error)
	// finish returns the wait of a claim that admitted nothing (n == 0),
	// or nil; it notes what the gate must note either way.
	finish(ctx context.Context, tx driver.ClaimTx, n int, w waits) error
	// write stores what the claim spent.
	write(ctx context.Context, tx driver.ClaimTx) error
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
