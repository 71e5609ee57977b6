package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/hint"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
)

// Gates opens the limits gate of a portfolio: several hosts that send
// from one portfolio's numbers share its buckets, caps and reach through
// it (--limits). Gate is called once per portfolio and claim; an
// implementation caches what it opens.
type Gates interface {
	Gate(portfolio string) (limits.Gate, error)
}

// DefaultPortfolio is the portfolio, in the shared limits, of the accounts
// that belong to none: they share its global bucket. Their messaging limit
// (reach) is their own and not shared; put numbers that several hosts send
// from into a portfolio (`wasend portfolio add`) to share it.
const DefaultPortfolio = "default"

// ShareLimits makes every later claim ask gates — not this database's
// buckets, caps, global bucket, reach, pair gap and sticky numbers — for
// each message's admission. The rows, attempts, windows, priorities and
// the suppression list stay in the database. unavailable tells a failure
// to reach the gates (fail closed: nothing is claimed, the engine waits)
// from other errors. The database's host id, which every claim id starts
// with, is made now the first time.
func (s *Store) ShareLimits(ctx context.Context, g Gates, unavailable func(error) bool) error {
	id, err := limitsHost(ctx, s)
	if err != nil {
		return err
	}
	s.shared = &sharedLimits{gates: g, unavailable: unavailable, host: id}
	return nil
}

// limitsHost is the database's id among the hosts sharing limits, made the
// first time it is asked for.
func limitsHost(ctx context.Context, s *Store) (string, error) {
	var id string
	err := s.write(ctx, func(tx *Tx) error {
		b := make([]byte, 8)
		rand.Read(b)
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)`, hostKey, hex.EncodeToString(b)); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, hostKey).Scan(&id)
	})
	if err != nil {
		return "", fmt.Errorf("host id for the shared limits: %w", err)
	}
	return id, nil
}

type sharedLimits struct {
	gates       Gates
	unavailable func(error) bool
	host        string // the database's id among the hosts (setting limits_host)
}

// hostKey is the setting that names this database among the hosts sharing
// limits: claim ids start with it, so two hosts never use the same one.
const hostKey = "limits_host"

// sharedClaimID names a row's attempt among every host's: the same row
// and attempt asked again (a retried transaction, a claim rolled back
// after its admission) is a replay that spends nothing twice.
func sharedClaimID(host string, messageID int64, attempt int) string {
	return host + ":" + strconv.FormatInt(messageID, 10) + ":" + strconv.Itoa(attempt)
}

// gateGroup is one portfolio's accounts in a shared claim.
type gateGroup struct {
	name  string
	gate  limits.Gate
	accts []int // indexes into the claim's accounts
	offer []limits.Account
	reach ratelimit.Reach
	// failed is why the gate could not be asked in this claim (its state
	// lost, or unreachable): the group's accounts wait, the others send.
	failed error
}

// sharedGate is the limits gate of a claim when the limits are shared
// (ShareLimits): each row asks the gates of the portfolios its accounts
// belong to. Accounts cooling down after a throttle (this host's
// knowledge) are not offered. The first refusal that no other row can
// escape (tokens, caps, the global bucket) ends the batch; rows the pair
// gap holds are put off, and a full portfolio still lets in the
// recipients its window holds.
type sharedGate struct {
	sh         *sharedLimits
	campaignID int64
	accts      []account
	groups     []gateGroup
	global     *ratelimit.Limit
	gap        time.Duration
	guard      string
	today      string
	used       []int            // per account, the rows admitted in this claim
	last       limits.Admission // the refusal that decides the wait
	refused    bool
	reachAt    time.Time // when a full portfolio makes room, when one refused
	gateErr    error
}

// openSharedGate gives queued refunds back and reads what the claim's
// requests need. Every account cooling down is a wait for its tokens.
func openSharedGate(ctx context.Context, tx *Tx, campaignID int64, accts []account, now time.Time) (*sharedGate, error) {
	sh := tx.s.shared
	if _, err := flushRefunds(ctx, tx, sh); err != nil {
		if !sh.unavailable(err) {
			return nil, err
		}
		// They stay queued; the admission below says whether to wait.
	}
	g := &sharedGate{sh: sh, campaignID: campaignID, accts: accts, used: make([]int, len(accts)), today: tx.s.Today(now)}
	var on bool
	var l ratelimit.Limit
	if err := tx.QueryRowContext(ctx, `SELECT enabled, rate, burst FROM global_limit WHERE id = 1`).Scan(&on, &l.Rate, &l.Burst); err != nil {
		return nil, fmt.Errorf("read global limit: %w", err)
	}
	if on {
		g.global = &l
	}
	var err error
	if g.gap, err = pairGap(ctx, tx, campaignID); err != nil {
		return nil, err
	}
	if g.guard, err = repeatGuard(ctx, tx, campaignID); err != nil {
		return nil, err
	}
	var cooling time.Time
	if g.groups, cooling, err = gateGroups(ctx, tx, sh, accts, now); err != nil {
		return nil, err
	}
	if len(g.groups) == 0 {
		// Every account rests after a throttle.
		return nil, &campaign.WaitError{Reason: campaign.WaitTokens, Until: cooling}
	}
	return g, nil
}

// read: the gates read their own state.
func (g *sharedGate) read(context.Context, *Tx, []campaign.Message) error { return nil }

func (g *sharedGate) admit(ctx context.Context, tx *Tx, m campaign.Message, now time.Time) (answer, error) {
	host := g.sh.host
	id := sharedClaimID(host, m.ID, m.Attempts+1)
	var (
		ad    limits.Admission
		gg    *gateGroup
		noAll = true // every group refused
		best  limits.Admission
		err   error
	)
	// One row asks the portfolios in the same order every time, so
	// a repeated ask meets its own earlier admission.
	start := int(m.ID % int64(len(g.groups)))
	asked, elsewhere := false, false
	for k := range g.groups {
		gg = &g.groups[(start+k)%len(g.groups)]
		if gg.failed != nil {
			continue
		}
		asked = true
		req := limits.Request{ClaimID: id, Accounts: gg.offer, Global: g.global, Today: g.today,
			Recipient: m.Phone, Reach: gg.reach, PairGap: g.gap, Sticky: campaign.StickyFor, Guard: g.guard, Host: host}
		ad, err = gg.gate.Admit(ctx, req)
		if errors.Is(err, limits.ErrRebuild) {
			// The portfolio's day was rebuilt after a loss: this
			// host's part goes in before anything it sends.
			if err = rebuildPart(ctx, tx, host, gg, g.today, now); err == nil {
				ad, err = gg.gate.Admit(ctx, req)
			}
		}
		if err == nil && ad.OK && ad.Index < 0 {
			// An earlier admission of this attempt for an account not
			// offered now (dropped meanwhile): give its cap back and
			// ask afresh under a new id.
			if _, err = gg.gate.Refund(ctx, ad.Claim); err == nil {
				req.ClaimID = id + "." + strconv.FormatInt(now.UnixNano(), 36)
				ad, err = gg.gate.Admit(ctx, req)
			}
		}
		if err != nil {
			if !errors.Is(err, limits.ErrStateLost) && !g.sh.unavailable(err) {
				return answer{}, err
			}
			// Fail closed for this portfolio only: its accounts
			// wait, the other portfolios' keep sending.
			gg.failed, g.gateErr = err, err
			continue
		}
		if ad.OK {
			noAll = false
			break
		}
		// Every wait below is this host's: the gate's, measured on
		// its clock, counted from this host's now.
		ad.Until = ad.UntilFrom(now)
		if ad.Reason == limits.ReasonElsewhere {
			// Another host sent it or has it in flight: whatever
			// the other portfolios say, this row is not sent.
			elsewhere = true
			break
		}
		best = earlierRefusal(best, ad)
	}
	switch {
	case elsewhere:
		return answer{skip: true}, nil
	case !asked || (noAll && best.Reason == ""):
		// Every portfolio this row could go from failed.
		return answer{stop: true}, nil
	case noAll && best.StickyAccount != "":
		// The recipient waits for their own number, as in the
		// local claim; the next rows may go from the others.
		return answer{own: true, reason: best.Reason, until: best.Until}, nil
	case noAll && best.Reason == limits.ReasonPair:
		return answer{reason: best.Reason, until: best.Until}, nil
	case noAll && best.Reason == limits.ReasonReach:
		g.refused, g.last = true, best
		if g.reachAt.IsZero() || best.Until.Before(g.reachAt) {
			g.reachAt = best.Until
		}
		// A full window may still take the next rows' recipients.
		return answer{reason: best.Reason, until: best.Until}, nil
	case noAll:
		g.refused, g.last = true, best
		return answer{reason: best.Reason, until: best.Until, stop: true}, nil
	}
	a := answer{ok: true, account: gg.accts[ad.Index],
		shared: &campaign.SharedClaim{Portfolio: gg.name, ID: ad.Claim.ID, Account: ad.Claim.Account, Day: ad.Claim.Day}}
	if ad.StickyBroken && !ad.Replayed {
		if a.broken, err = stickyBreak(ctx, tx, g.campaignID, g.accts, ad.StickyAccount, now); err != nil {
			return answer{}, err
		}
	}
	g.used[a.account]++
	return a, nil
}

// finish notes or clears the wait for gates that could not be asked, and
// returns the wait of a claim that admitted nothing (n == 0).
func (g *sharedGate) finish(ctx context.Context, tx *Tx, n int, w claimWaits) error {
	if g.gateErr != nil {
		we, err := sharedWait(ctx, tx, withoutClaimIDs(g.sh.host), g.campaignID, g.accts, g.groups, w.now)
		if err != nil {
			return err
		}
		if n == 0 {
			return we
		}
	} else if _, err := tx.ExecContext(ctx, `DELETE FROM gate_waits WHERE campaign_id = ?`, g.campaignID); err != nil {
		return fmt.Errorf("campaign %d: clear the wait for shared limits: %w", g.campaignID, err)
	}
	if n > 0 {
		return nil
	}
	if w.skipped > 0 && !g.refused {
		// The batch went to rows another host has: the rows due
		// behind them may go now, not a poll later.
		return &campaign.WaitError{Reason: campaign.WaitRetry, Until: w.now}
	}
	return sharedRefusal(ctx, tx, g.campaignID, w.now, w.deadline, g.refused, g.last, w.deferred, g.reachAt)
}

// write counts this host's sends of the day, for `account list` and the
// rate the engine sizes its requests by; the gates hold the shared count.
func (g *sharedGate) write(ctx context.Context, tx *Tx) error {
	for i, n := range g.used {
		if n == 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET used_today = used_today + ? WHERE id = ?`, n, g.accts[i].ID); err != nil {
			return fmt.Errorf("count sends of %s: %w", g.accts[i].Name, err)
		}
	}
	return nil
}

// ElsewhereReason is the error message of a row skipped because another
// host sharing the limits sent its recipient the same message within 24 h,
// or has it in flight (campaign.MoveSkipElsewhere).
const ElsewhereReason = "sent by another host sharing the limits (or in flight there) within 24 h; not sent again"

// repeatGuard names the campaign's message for the repeat guard across
// hosts: its template, as the same-template rule of an import reads it,
// or a digest of its text.
func repeatGuard(ctx context.Context, q querier, campaignID int64) (string, error) {
	var kind, template, text string
	if err := q.QueryRowContext(ctx, `SELECT kind, template, text FROM campaigns WHERE id = ?`, campaignID).Scan(&kind, &template, &text); err != nil {
		return "", fmt.Errorf("read the message of campaign %d: %w", campaignID, err)
	}
	if campaign.MessageKind(kind) == campaign.KindTemplate {
		return "t:" + template, nil
	}
	sum := sha256.Sum256([]byte(text))
	return "x:" + hex.EncodeToString(sum[:16]), nil
}

// gateGroups sorts the claim's accounts by portfolio, leaving out those
// cooling down after a throttle; cooling is when the first of those may
// send again.
func gateGroups(ctx context.Context, tx *Tx, sh *sharedLimits, accts []account, now time.Time) (groups []gateGroup, cooling time.Time, err error) {
	byPortfolio := map[int64]int{}
	for i, a := range accts {
		if now.Before(a.health.CooldownUntil) {
			if cooling.IsZero() || a.health.CooldownUntil.Before(cooling) {
				cooling = a.health.CooldownUntil
			}
			continue
		}
		k, ok := byPortfolio[a.portfolioID]
		if !ok {
			g := gateGroup{name: DefaultPortfolio}
			if a.portfolioID != 0 {
				g.name = a.Portfolio
				read, _, _, err := readLimit(ctx, tx, a)
				if err != nil {
					return nil, cooling, err
				}
				g.reach = ratelimit.Reach{Limit: effectiveLimit(a.pinnedLimit, read), Margin: a.margin}
			}
			if g.gate, err = sh.gates.Gate(g.name); err != nil {
				return nil, cooling, fmt.Errorf("shared limits of portfolio %s: %w", g.name, err)
			}
			k = len(groups)
			byPortfolio[a.portfolioID] = k
			groups = append(groups, g)
		}
		g := &groups[k]
		g.accts = append(g.accts, i)
		g.offer = append(g.offer, limits.Account{Name: GateAccount(a.PhoneNumberID), Limit: a.limit(now),
			DailyCap: a.Limits.DailyCap, Demoted: a.health.Demoted(now)})
	}
	return groups, cooling, nil
}

// GateAccount is an account's name in the shared limits: its phone number
// id, which every host that sends from the number knows it by, whatever
// each calls the account.
func GateAccount(phoneNumberID string) string { return phoneNumberID }

// earlierRefusal is the refusal that lets a row go first: a wait with an
// end before one without (caps), the earlier end before the later.
func earlierRefusal(a, b limits.Admission) limits.Admission {
	switch {
	case a.Reason == "":
		return b
	case a.Until.IsZero() && !b.Until.IsZero():
		return b
	case !a.Until.IsZero() && !b.Until.IsZero() && b.Until.Before(a.Until):
		return b
	}
	return a
}

// sharedRefusal is the wait of a shared claim that admitted nothing, the
// same kinds the local claim returns.
func sharedRefusal(ctx context.Context, tx *Tx, campaignID int64, now, deadline time.Time,
	refused bool, last limits.Admission, deferred, reachAt time.Time) error {
	if !refused {
		// Every row was put off by the pair gap.
		return &campaign.WaitError{Reason: campaign.WaitRetry, Until: expireBy(deferred, deadline)}
	}
	reason, until := campaign.WaitTokens, last.Until
	switch last.Reason {
	case ratelimit.ReasonCapped, ratelimit.ReasonEmpty:
		reason = campaign.WaitCapped
	case ratelimit.ReasonGlobal:
		reason = campaign.WaitGlobal
	case limits.ReasonReach:
		reason, until = campaign.WaitReach, reachAt
	}
	if reason != campaign.WaitCapped && reason != campaign.WaitReach && !deferred.IsZero() && (until.IsZero() || deferred.Before(until)) {
		until = deferred
	}
	if reason == campaign.WaitCapped && !reachAt.IsZero() {
		reason, until = campaign.WaitReach, reachAt
	}
	if reason == campaign.WaitReach {
		// Rows put off earlier may be recipients the window holds: wait
		// for them first, as the local claim does.
		var next sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT min(next_attempt_at) FROM messages
			WHERE campaign_id = ? AND state = 'pending' AND next_attempt_at > ?`, campaignID, now.UnixNano()).Scan(&next); err != nil {
			return fmt.Errorf("find the next retry: %w", err)
		}
		if next.Valid && (until.IsZero() || fromNanos(next.Int64).Before(until)) {
			reason, until = campaign.WaitRetry, fromNanos(next.Int64)
		}
	}
	if reason == campaign.WaitRetry || reason == campaign.WaitReach {
		until = expireBy(until, deadline)
	}
	return &campaign.WaitError{Reason: reason, Until: until}
}

// sharedWait notes that some of the campaign's portfolios cannot be asked
// (their shared state lost, or Redis unreachable) and returns the wait of
// a claim that admitted nothing: lost when any portfolio lost its state
// (a forced quota reset ends it), else unreachable (it ends by itself).
// The note says which portfolios and, for lost ones, the exact command;
// the gates' errors name claim ids, which are cut out of it.
func sharedWait(ctx context.Context, tx *Tx, claimIDs func(string) string, campaignID int64,
	accts []account, groups []gateGroup, now time.Time) (*campaign.WaitError, error) {
	reason := campaign.WaitLimits
	var lost, down, debug []string
	for _, g := range groups {
		if g.failed == nil {
			continue
		}
		debug = append(debug, "portfolio "+g.name+": "+g.failed.Error())
		why := claimIDs(g.failed.Error())
		if errors.Is(g.failed, limits.ErrStateLost) {
			reason = campaign.WaitLimitsLost
			var names []string
			for _, i := range g.accts {
				names = append(names, accts[i].Name)
			}
			if why == limits.ErrStateLost.Error() {
				why = "Redis holds no state for it (restarted without persistence, or never started)"
			} else {
				why = strings.TrimSuffix(why, ": "+limits.ErrStateLost.Error())
			}
			lost = append(lost, fmt.Sprintf("portfolio %s: %s; its accounts wait until `wasend quota reset --force --account %s%s` rebuilds its day from this host's count",
				g.name, why, strings.Join(names, ","), hint.StoredFlags))
			continue
		}
		down = append(down, fmt.Sprintf("portfolio %s: %s", g.name, why))
	}
	detail := strings.Join(append(lost, down...), "; ")
	if _, err := tx.ExecContext(ctx, `INSERT INTO gate_waits (campaign_id, since, seen, reason, error) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (campaign_id) DO UPDATE SET seen = excluded.seen, reason = excluded.reason, error = excluded.error`,
		campaignID, now.UnixNano(), now.UnixNano(), string(reason), detail); err != nil {
		return nil, fmt.Errorf("campaign %d: note the wait for shared limits: %w", campaignID, err)
	}
	return &campaign.WaitError{Reason: reason, Until: now.Add(campaign.LimitsPoll), Detail: detail, Debug: strings.Join(debug, "; ")}, nil
}

// withoutClaimIDs cuts this claim's ids ("admit HOST:ROW:ATTEMPT: ") out of a gate's
// error: user-facing text carries no internal ids.
func withoutClaimIDs(host string) func(string) string {
	return func(s string) string {
		for {
			i := strings.Index(s, "admit "+host+":")
			if i < 0 {
				return s
			}
			j := strings.Index(s[i:], ": ")
			if j < 0 {
				return s[:i]
			}
			s = s[:i] + s[i+j+2:]
		}
	}
}

// queueRefund keeps a refund for the shared limits until a gate takes it
// (flushRefunds): recording an outcome never waits on Redis.
func queueRefund(ctx context.Context, tx *Tx, c *campaign.SharedClaim, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO gate_refunds (claim, portfolio, account, day, at) VALUES (?, ?, ?, ?, ?)`,
		c.ID, c.Portfolio, c.Account, c.Day, now.UnixNano()); err != nil {
		return fmt.Errorf("queue the refund of %s: %w", c.ID, err)
	}
	return nil
}

// refundsPerClaim bounds the refunds one claim gives back: a backlog after
// an outage drains over a few claims.
const refundsPerClaim = 64

// flushRefunds gives queued refunds back to the gates, oldest first, at
// most refundsPerClaim, and forgets those a gate took (a refund applies
// once by its claim id, so one given back twice after a rolled-back
// transaction is harmless). It returns how many it gave back.
func flushRefunds(ctx context.Context, tx *Tx, sh *sharedLimits) (int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT claim, portfolio, account, day FROM gate_refunds ORDER BY at LIMIT ?`, refundsPerClaim)
	if err != nil {
		return 0, fmt.Errorf("read queued refunds: %w", err)
	}
	var queued []campaign.SharedClaim
	for rows.Next() {
		var c campaign.SharedClaim
		if err := rows.Scan(&c.ID, &c.Portfolio, &c.Account, &c.Day); err != nil {
			rows.Close()
			return 0, fmt.Errorf("read queued refunds: %w", err)
		}
		queued = append(queued, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read queued refunds: %w", err)
	}
	for i, c := range queued {
		g, err := sh.gates.Gate(c.Portfolio)
		if err != nil {
			return i, fmt.Errorf("shared limits of portfolio %s: %w", c.Portfolio, err)
		}
		if _, err := g.Refund(ctx, limits.Claim{ID: c.ID, Account: c.Account, Day: c.Day}); err != nil && sh.unavailable(err) {
			return i, err
		}
		// Given back, given back before, or unknown (expired, or the
		// state was lost): nothing more to do. A mismatch is a bug
		// that asking again cannot fix.
		if _, err := tx.ExecContext(ctx, `DELETE FROM gate_refunds WHERE claim = ?`, c.ID); err != nil {
			return i, fmt.Errorf("forget the refund of %s: %w", c.ID, err)
		}
	}
	return len(queued), nil
}

// GiveBackRefunds gives every queued refund back to the shared limits now:
// a run's last outcomes come after its last claim, which would otherwise
// leave their refunds for the next run. What Redis cannot take stays
// queued (the error says why). Without shared limits it does nothing.
func (s *Store) GiveBackRefunds(ctx context.Context) error {
	if s.shared == nil {
		return nil
	}
	for {
		var n int
		err := s.write(ctx, func(tx *Tx) error {
			var err error
			n, err = flushRefunds(ctx, tx, s.shared)
			return err
		})
		if err != nil {
			return fmt.Errorf("give refunds back to the shared limits: %w", err)
		}
		if n < refundsPerClaim {
			return nil
		}
	}
}

// stickyBreak says why a recipient's sticky number (its name in the gate)
// was not offered, for the campaign's tally: the reasons of the local
// claim, plus two only shared limits have — a number of this host cooling
// down after a throttle (the local claim waits for it; the gate, which
// knows nothing of this host's cooldowns, was not offered it), and a
// number this host does not have (another host's, in the same portfolio).
func stickyBreak(ctx context.Context, tx *Tx, campaignID int64, accts []account, gateName string, now time.Time) (string, error) {
	for _, a := range accts {
		if GateAccount(a.PhoneNumberID) != gateName {
			continue
		}
		if a.Restriction != "" && a.CooldownUntil.After(now) {
			return campaign.StickyRestricted, nil
		}
		return campaign.StickyCooling, nil
	}
	var disabled, removed, dropped bool
	err := tx.QueryRowContext(ctx, `SELECT disabled, removed_at IS NOT NULL,
		EXISTS (SELECT 1 FROM campaign_accounts WHERE campaign_id = ? AND account_id = accounts.id)
		FROM accounts WHERE phone_number_id = ? ORDER BY removed_at IS NULL DESC, id DESC LIMIT 1`, campaignID, gateName).
		Scan(&disabled, &removed, &dropped)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return campaign.StickyElsewhere, nil
	case err != nil:
		return "", fmt.Errorf("read the account of number %s: %w", gateName, err)
	case removed:
		return campaign.StickyRemoved, nil
	case dropped:
		return campaign.StickyDropped, nil
	}
	return campaign.StickyDisabled, nil
}
