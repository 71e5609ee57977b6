package store

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// tally gathers what the sending path's statements change in the counts of
// migration 0010 (message_counts, attempt_rollup, attempt_firsts), to write
// them in a few statements per transaction. The triggers in counts.sql run
// several statements for every row they count, about a third of SQLite's
// work per message on this path; a statement that tallies its rows here
// flips their tally column (migration 0024), which the triggers skip.
//
// Every other move is still counted by the triggers, and storetest.CheckCounts
// holds the sum of both to a recount.
type tally struct {
	states   map[stateKey]int
	requests map[minuteKey]*requestTally
	answers  map[minuteKey]*answerTally
}

type stateKey struct {
	campaign, account int64
	state             campaign.State
}

// minuteKey is an attempt_rollup (and attempt_firsts) row's key.
type minuteKey struct{ campaign, account, minute int64 }

// minuteNanos is the resolution of the attempt rollups (migration 0010).
const minuteNanos = int64(time.Minute)

// requestTally is what first requests add to a minute: each is filed under
// the minute it was claimed in, with no request before it (-1, -1).
type requestTally struct {
	n           int
	first, last int64 // claimed_at
}

// answerTally is what plain sent answers add to the minute their request
// was claimed in.
type answerTally struct {
	sent, throttled int
	done            int64
}

// move counts one row leaving (fromAccount, from) for (toAccount, to).
func (t *tally) move(campaignID, fromAccount int64, from campaign.State, toAccount int64, to campaign.State) {
	if t.states == nil {
		t.states = map[stateKey]int{}
	}
	t.states[stateKey{campaignID, fromAccount, from}]--
	t.states[stateKey{campaignID, toAccount, to}]++
}

// request counts a message's first request, claimed at.
func (t *tally) request(campaignID, account int64, at time.Time) {
	if t.requests == nil {
		t.requests = map[minuteKey]*requestTally{}
	}
	k := minuteKey{campaignID, account, at.UnixNano() / minuteNanos}
	r := t.requests[k]
	if r == nil {
		r = &requestTally{first: at.UnixNano(), last: at.UnixNano()}
		t.requests[k] = r
	}
	r.n++
	r.first, r.last = min(r.first, at.UnixNano()), max(r.last, at.UnixNano())
}

// answer counts a request claimed at claimedAt (Unix nanoseconds) that was
// accepted at done, throttled before when its class says so.
func (t *tally) answer(campaignID, account, claimedAt int64, class string, done time.Time) {
	if t.answers == nil {
		t.answers = map[minuteKey]*answerTally{}
	}
	k := minuteKey{campaignID, account, claimedAt / minuteNanos}
	a := t.answers[k]
	if a == nil {
		a = &answerTally{done: claimedAt}
		t.answers[k] = a
	}
	a.sent++
	if class == "throttled" || class == "pair-throttled" {
		a.throttled++
	}
	a.done = max(a.done, done.UnixNano())
}

const countAnswerSQL = `UPDATE attempt_rollup SET throttled = throttled + ?1, sent = sent + ?2, done_at = max(done_at, ?3)
	WHERE campaign_id = ?4 AND account_id = ?5 AND minute = ?6`

// write adds what t gathered to the counts, and empties t.
func (t *tally) write(ctx context.Context, tx *Tx) error {
	var args []any
	// In key order: the same statements whatever the maps' order, so a
	// retried transaction writes alike.
	for _, k := range slices.SortedFunc(maps.Keys(t.states), stateKey.compare) {
		if n := t.states[k]; n != 0 {
			args = append(args, k.campaign, k.account, string(k.state), n)
		}
	}
	if len(args) > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO message_counts (campaign_id, account_id, state, n) VALUES `+
			repeated(len(args)/4, "(?, ?, ?, ?)")+` ON CONFLICT DO UPDATE SET n = n + excluded.n`, args...); err != nil {
			return fmt.Errorf("count messages: %w", err)
		}
	}

	var rollup, firsts []any
	for _, k := range slices.SortedFunc(maps.Keys(t.requests), minuteKey.compare) {
		r := t.requests[k]
		rollup = append(rollup, k.campaign, k.account, k.minute, r.n, r.first, r.last, r.last)
		firsts = append(firsts, k.campaign, k.account, k.minute, r.n)
	}
	if len(rollup) > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO attempt_rollup (campaign_id, account_id, minute, attempts, throttled,
			sent, first_at, last_at, done_at) VALUES `+repeated(len(rollup)/7, "(?, ?, ?, ?, 0, 0, ?, ?, ?)")+`
			ON CONFLICT DO UPDATE SET attempts = attempts + excluded.attempts, first_at = min(first_at, excluded.first_at),
			last_at = max(last_at, excluded.last_at), done_at = max(done_at, excluded.done_at)`, rollup...); err != nil {
			return fmt.Errorf("count requests: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO attempt_firsts (campaign_id, account_id, minute, prev_any,
			prev_account, n) VALUES `+repeated(len(firsts)/4, "(?, ?, ?, -1, -1, ?)")+`
			ON CONFLICT DO UPDATE SET n = n + excluded.n`, firsts...); err != nil {
			return fmt.Errorf("count requests: %w", err)
		}
	}

	// The request made the minute's row: an answer only adds to it. A
	// statement a minute's row: SQLite would build the join of one
	// UPDATE … FROM (VALUES …) into a temporary table.
	for _, k := range slices.SortedFunc(maps.Keys(t.answers), minuteKey.compare) {
		a := t.answers[k]
		if _, err := tx.ExecContext(ctx, countAnswerSQL, a.throttled, a.sent, a.done, k.campaign, k.account, k.minute); err != nil {
			return fmt.Errorf("count answers: %w", err)
		}
	}
	*t = tally{}
	return nil
}

func (a stateKey) compare(b stateKey) int {
	return cmp.Or(cmp.Compare(a.campaign, b.campaign), cmp.Compare(a.account, b.account), cmp.Compare(a.state, b.state))
}

func (a minuteKey) compare(b minuteKey) int {
	return cmp.Or(cmp.Compare(a.campaign, b.campaign), cmp.Compare(a.account, b.account), cmp.Compare(a.minute, b.minute))
}
