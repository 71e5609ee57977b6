package readmodel

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Detail is everything known about one campaign, for `campaign show`.
type Detail struct {
	Campaign campaign.Campaign
	Counts   campaign.Counts
	Stats    Stats
	// Errors groups the failed rows by Graph error code, most frequent
	// first. Code 0 holds failures without one (a suppressed number).
	Errors []ErrorGroup
	// Accounts splits the work by account: outcomes by the account that
	// made a row's last request, requests by the account that made each.
	Accounts []AccountSplit
	// FirstAttempt is when the first request was claimed, LastAttempt when
	// the last one was answered (or claimed, while it is in flight).
	FirstAttempt, LastAttempt time.Time
	Dropped                   []Dropped
	// PutBack groups the pending rows an error put back to be sent again
	// (a transient error's retry, a 131049 webhook's reschedule) by that
	// error's code, most first.
	PutBack []PutBackGroup
	// FailedStatuses groups the failed status webhooks that arrived for
	// the campaign's messages by code, with what became of each row.
	FailedStatuses []FailedStatusGroup
}

// PutBackGroup is the pending rows put back after one error code.
type PutBackGroup struct {
	Code    int
	Count   int
	NextTry time.Time // the earliest of them is due
	Sample  string    // the error message of the group's first line
}

// FailedStatusGroup is the failed status webhooks of one code, by what
// their row is now: KeptFailed failed after send, PutBack pending to be
// sent again (131049), SentAgain sent again since (or in any other state).
type FailedStatusGroup struct {
	Code                           int
	Count                          int
	KeptFailed, PutBack, SentAgain int
}

// ErrorGroup is the failed rows that share one error code.
type ErrorGroup struct {
	Code   int
	Count  int
	Sample string // the error message of the group's first line
}

// AccountSplit is one account's share of a campaign.
type AccountSplit struct {
	Account               string
	Sent, Failed, Unknown int
	Attempts, Throttled   int
}

// Elapsed is the time from the first request to the last answer.
func (d Detail) Elapsed() time.Duration {
	if d.FirstAttempt.IsZero() {
		return 0
	}
	return d.LastAttempt.Sub(d.FirstAttempt)
}

// SendRate is messages sent per second over Elapsed; 0 before a second has
// passed.
func (d Detail) SendRate() float64 {
	if el := d.Elapsed(); el >= time.Second {
		return float64(d.Counts[campaign.Sent]) / el.Seconds()
	}
	return 0
}

// CampaignDetail reads one campaign with its aggregates. It returns
// campaign.ErrNotFound (wrapped) for an unknown id.
func (r *Reader) CampaignDetail(ctx context.Context, id int64) (Detail, error) {
	var (
		d   Detail
		err error
	)
	if d.Campaign, err = r.src.Campaign(ctx, id); err != nil {
		return d, err
	}
	if d.Counts, err = r.src.Counts(ctx, id); err != nil {
		return d, err
	}
	if d.Stats, err = r.CampaignStats(ctx, id); err != nil {
		return d, err
	}
	if d.Errors, err = r.errorGroups(ctx, id); err != nil {
		return d, err
	}
	if d.Accounts, err = r.accountSplits(ctx, id); err != nil {
		return d, err
	}
	if err := r.setNotSent(ctx, id, &d); err != nil {
		return d, err
	}
	var first, last sql.NullInt64
	if err := r.db.QueryRowContext(ctx, `SELECT min(first_at), max(done_at)
		FROM attempt_rollup WHERE campaign_id = ?`, id).Scan(&first, &last); err != nil {
		return d, fmt.Errorf("campaign %d timings: %w", id, err)
	}
	d.FirstAttempt, d.LastAttempt = fromNullNanos(first), fromNullNanos(last)
	if d.Dropped, err = r.DroppedAccounts(ctx, id); err != nil {
		return d, err
	}
	if d.PutBack, err = r.putBack(ctx, id); err != nil {
		return d, err
	}
	if d.FailedStatuses, err = r.failedStatuses(ctx, id); err != nil {
		return d, err
	}
	return d, nil
}

func (r *Reader) putBack(ctx context.Context, id int64) ([]PutBackGroup, error) {
	// As errorGroups: the sample is the message of the group's first line,
	// here the first row of each code's window (beside a second min() a
	// bare column's row is any of the two). The rows put back alone are
	// read, through messages_put_back (migration 0046), not every pending
	// row: few, so the window's sort costs little.
	rows, err := r.db.QueryContext(ctx, `SELECT code, n, next, sample, line FROM (
		SELECT error_code AS code, count(*) OVER codes AS n, min(next_attempt_at) OVER codes AS next,
			coalesce(error_message, '') AS sample, line, row_number() OVER (codes ORDER BY line, id) AS k
		FROM messages WHERE campaign_id = ? AND state = 'pending' AND error_code IS NOT NULL
		WINDOW codes AS (PARTITION BY error_code)) firsts
		WHERE k = 1 ORDER BY n DESC, code`, id)
	if err != nil {
		return nil, fmt.Errorf("campaign %d rows put back by code: %w", id, err)
	}
	defer rows.Close()
	var out []PutBackGroup
	for rows.Next() {
		var (
			g          PutBackGroup
			next, line int64
		)
		if err := rows.Scan(&g.Code, &g.Count, &next, &g.Sample, &line); err != nil {
			return nil, err
		}
		g.NextTry = fromNanos(next)
		out = append(out, g)
	}
	return out, rows.Err()
}

func (r *Reader) failedStatuses(ctx context.Context, id int64) ([]FailedStatusGroup, error) {
	// From the failed statuses (a partial index, migration 0046) to their
	// messages: CROSS JOIN keeps SQLite from probing every message of the
	// campaign instead (its condition in WHERE, as Postgres wants it).
	rows, err := r.db.QueryContext(ctx, `SELECT coalesce(s.error_code, 0) AS code, count(*),
		count(CASE WHEN m.state = 'failed' THEN 1 END), count(CASE WHEN m.state = 'pending' THEN 1 END)
		FROM message_statuses s CROSS JOIN messages m
		WHERE m.id = s.message_id AND m.campaign_id = ? AND s.status = 'failed'
		GROUP BY code ORDER BY count(*) DESC, code`, id)
	if err != nil {
		return nil, fmt.Errorf("campaign %d failed statuses: %w", id, err)
	}
	defer rows.Close()
	var out []FailedStatusGroup
	for rows.Next() {
		var g FailedStatusGroup
		if err := rows.Scan(&g.Code, &g.Count, &g.KeptFailed, &g.PutBack); err != nil {
			return nil, err
		}
		g.SentAgain = g.Count - g.KeptFailed - g.PutBack
		out = append(out, g)
	}
	return out, rows.Err()
}

// FailedStatusCount is how many failed status webhooks arrived in all.
func (d Detail) FailedStatusCount() int {
	n := 0
	for _, g := range d.FailedStatuses {
		n += g.Count
	}
	return n
}

// setNotSent takes the claims put back without a request out of the
// request counts and counts them apart, so that show's requests are the
// ones that reached the API. attempt_rollup doesn't tell them apart;
// tier_minutes (migration 0046) counts them by minute as rows move.
func (r *Reader) setNotSent(ctx context.Context, id int64, d *Detail) error {
	rows, err := r.db.QueryContext(ctx, `SELECT a.name, sum(k.not_sent) FROM tier_minutes k
		JOIN accounts a ON a.id = k.account_id
		WHERE k.campaign_id = ? GROUP BY a.name HAVING sum(k.not_sent) <> 0`, id)
	if err != nil {
		return fmt.Errorf("campaign %d claims put back: %w", id, err)
	}
	defer rows.Close()
	byAccount := map[string]int{}
	for rows.Next() {
		var acct string
		var n int
		if err := rows.Scan(&acct, &n); err != nil {
			return err
		}
		byAccount[acct] = n
		d.Stats.NotSent += n
	}
	if err := rows.Err(); err != nil {
		return err
	}
	d.Stats.Attempts -= d.Stats.NotSent
	for i := range d.Accounts {
		d.Accounts[i].Attempts -= byAccount[d.Accounts[i].Account]
	}
	return nil
}

func (r *Reader) errorGroups(ctx context.Context, id int64) ([]ErrorGroup, error) {
	// The sample is the message of the group's first line. A window
	// function would say so on both engines, at three times the cost of
	// the grouping on SQLite (180,000 failed rows: 1.1 s against 0.3 s):
	// the dialect's firstBy.
	rows, err := r.db.QueryContext(ctx, `SELECT coalesce(error_code, 0) AS code, count(*),
		`+r.db.d.firstBy("coalesce(error_message, '')", "line")+`, min(line)
		FROM messages WHERE campaign_id = ? AND state = 'failed'
		GROUP BY code ORDER BY count(*) DESC, code`, id)
	if err != nil {
		return nil, fmt.Errorf("campaign %d failures by code: %w", id, err)
	}
	defer rows.Close()
	var out []ErrorGroup
	for rows.Next() {
		var g ErrorGroup
		var line int
		if err := rows.Scan(&g.Code, &g.Count, &g.Sample, &line); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

func (r *Reader) accountSplits(ctx context.Context, id int64) ([]AccountSplit, error) {
	rows, err := r.db.QueryContext(ctx, `WITH
		outcomes AS (SELECT account_id,
			sum(CASE WHEN state = 'sent' THEN n END) AS sent,
			sum(CASE WHEN state = 'failed' THEN n END) AS failed,
			sum(CASE WHEN state = 'unknown' THEN n END) AS unknown
			FROM message_counts WHERE campaign_id = ? AND account_id <> 0 GROUP BY account_id HAVING sum(n) <> 0),
		requests AS (SELECT account_id, sum(attempts) AS attempts, sum(throttled) AS throttled
			FROM attempt_rollup WHERE campaign_id = ? GROUP BY account_id)
		SELECT a.name, coalesce(o.sent, 0), coalesce(o.failed, 0), coalesce(o.unknown, 0),
			coalesce(r.attempts, 0), coalesce(r.throttled, 0)
		FROM accounts a LEFT JOIN outcomes o ON o.account_id = a.id LEFT JOIN requests r ON r.account_id = a.id
		WHERE o.account_id IS NOT NULL OR r.account_id IS NOT NULL
		ORDER BY `+r.db.d.bytewise("a.name"), id, id)
	if err != nil {
		return nil, fmt.Errorf("campaign %d by account: %w", id, err)
	}
	defer rows.Close()
	var out []AccountSplit
	for rows.Next() {
		var a AccountSplit
		if err := rows.Scan(&a.Account, &a.Sent, &a.Failed, &a.Unknown, &a.Attempts, &a.Throttled); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
