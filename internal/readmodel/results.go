package readmodel

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Stats are a campaign's attempt figures, overall and over the last hour.
type Stats struct {
	Attempts          int // claims made; CampaignDetail counts only those that reached the API
	Throttled         int // answered with a throttling error (429 class)
	MessagesAttempted int // messages with at least one request
	HourAttempts      int
	HourThrottled     int
	HourMessages      int
	// NotSent are claims put back without a request (the account or
	// campaign stopped meanwhile): their token was spent, nothing was sent.
	// Only CampaignDetail reads it (the rollups status reads don't keep it).
	NotSent int
}

// notSent is dispatch.ClassNotSent: an attempt put back without a request.
const notSent = "not-sent"

// ThrottleRate is the share of requests that were throttled.
func (s Stats) ThrottleRate() float64 { return ratio(s.Throttled, s.Attempts) }

// HourThrottleRate is ThrottleRate over the last hour.
func (s Stats) HourThrottleRate() float64 { return ratio(s.HourThrottled, s.HourAttempts) }

// AvgAttempts is requests per message tried.
func (s Stats) AvgAttempts() float64 { return ratio(s.Attempts, s.MessagesAttempted) }

// minuteNanos is the resolution of the attempt rollups (migration 0010,
// store's minuteNanos): a window starting at since covers the whole
// minute since falls in.
const minuteNanos = int64(time.Minute)

// sinceMinute is the first rollup minute of a window starting at since; 0
// (everything) for the zero time.
func sinceMinute(since time.Time) int64 { return nanos(since) / minuteNanos }

// CampaignStats computes a campaign's attempt figures, from the attempt
// rollups: the last hour starts at the beginning of the minute an hour ago.
func (r *Reader) CampaignStats(ctx context.Context, id int64) (Stats, error) {
	var st Stats
	hour := sinceMinute(r.now().Add(-time.Hour))
	err := r.db.QueryRowContext(ctx, `SELECT coalesce(sum(attempts), 0), coalesce(sum(throttled), 0),
		coalesce(sum(CASE WHEN minute >= ? THEN attempts END), 0),
		coalesce(sum(CASE WHEN minute >= ? THEN throttled END), 0)
		FROM attempt_rollup WHERE campaign_id = ?`, hour, hour, id).
		Scan(&st.Attempts, &st.Throttled, &st.HourAttempts, &st.HourThrottled)
	if err == nil {
		err = r.db.QueryRowContext(ctx, `SELECT coalesce(sum(CASE WHEN prev_any < 0 THEN n END), 0),
			coalesce(sum(CASE WHEN minute >= ?1 AND prev_any < ?1 THEN n END), 0)
			FROM attempt_firsts WHERE campaign_id = ?2`, hour, id).
			Scan(&st.MessagesAttempted, &st.HourMessages)
	}
	if err != nil {
		return st, fmt.Errorf("campaign %d stats: %w", id, err)
	}
	return st, nil
}

// Dropped is an account stopped for one campaign by an account-fatal error.
type Dropped struct {
	Account   string
	Reason    string
	ErrorCode int
	At        time.Time
}

// DroppedAccounts lists the accounts stopped for a campaign.
func (r *Reader) DroppedAccounts(ctx context.Context, id int64) ([]Dropped, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT a.name, c.reason, coalesce(c.error_code, 0), c.at
		FROM campaign_accounts c JOIN accounts a ON a.id = c.account_id WHERE c.campaign_id = ? ORDER BY `+r.db.d.bytewise("a.name"), id)
	if err != nil {
		return nil, fmt.Errorf("list dropped accounts: %w", err)
	}
	defer rows.Close()
	var out []Dropped
	for rows.Next() {
		var d Dropped
		var at int64
		if err := rows.Scan(&d.Account, &d.Reason, &d.ErrorCode, &at); err != nil {
			return nil, err
		}
		d.At = fromNanos(at)
		out = append(out, d)
	}
	return out, rows.Err()
}

// FailedMessage is a row that failed: the dead-letter list.
type FailedMessage struct {
	Line        int
	Input       string
	Phone       string
	ErrorCode   int
	Error       string
	Attempts    int
	Account     string
	LastAttempt time.Time
	// GaveUp is true for rows that exhausted their retries on transient
	// errors (rather than failing for good at the first answer).
	GaveUp bool
}

// FailedMessages lists a campaign's failed rows, oldest line first.
func (r *Reader) FailedMessages(ctx context.Context, id int64) ([]FailedMessage, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT m.line, m.input, m.phone, coalesce(m.error_code, 0),
		coalesce(m.error_message, ''), m.attempts, coalesce(a.name, ''), coalesce(m.updated_at, 0)
		FROM messages m LEFT JOIN accounts a ON a.id = m.account_id
		WHERE m.campaign_id = ? AND m.state = 'failed' ORDER BY m.line`, id)
	if err != nil {
		return nil, fmt.Errorf("list failed messages: %w", err)
	}
	defer rows.Close()
	var out []FailedMessage
	for rows.Next() {
		var f FailedMessage
		var at int64
		if err := rows.Scan(&f.Line, &f.Input, &f.Phone, &f.ErrorCode, &f.Error, &f.Attempts, &f.Account, &at); err != nil {
			return nil, err
		}
		f.LastAttempt = fromNanos(at)
		f.GaveUp = strings.HasPrefix(f.Error, "gave up after")
		out = append(out, f)
	}
	return out, rows.Err()
}

// Activity is one account's requests over a window.
type Activity struct {
	Attempts  int       // requests made
	Throttled int       // of which throttled (429 class)
	Messages  int       // distinct messages tried
	Sent      int       // accepted
	First     time.Time // first request in the window
	Last      time.Time // last request in the window
}

// ThrottleRate is the share of requests throttled.
func (a Activity) ThrottleRate() float64 { return ratio(a.Throttled, a.Attempts) }

// AvgAttempts is requests per message tried.
func (a Activity) AvgAttempts() float64 { return ratio(a.Attempts, a.Messages) }

// Utilisation is tokens spent over tokens that became available while the
// account was working: a burst plus its rate over the span between its
// first and last request in the window. Below 70 % with work waiting means
// limits (cool-downs, caps) hold it back; 100 % means it runs flat out.
func (a Activity) Utilisation(rate float64, burst int) float64 {
	if a.Attempts == 0 {
		return 0
	}
	return min(float64(a.Attempts)/a.Available(rate, burst), 1)
}

// Available is the tokens the account earned over its working span.
func (a Activity) Available(rate float64, burst int) float64 {
	return float64(min(burst, a.Attempts)) + rate*a.Last.Sub(a.First).Seconds()
}

// AccountActivity returns each account's activity since the given instant,
// keyed by account name.
func (r *Reader) AccountActivity(ctx context.Context, since time.Time) (map[string]Activity, error) {
	return r.Activity(ctx, since, 0)
}

// Activity is AccountActivity limited to one campaign's messages, or over
// all campaigns when campaignID is 0. It reads the attempt rollups, so the
// window starts at the beginning of the minute since falls in.
func (r *Reader) Activity(ctx context.Context, since time.Time, campaignID int64) (map[string]Activity, error) {
	// Both rollups are summed by account before the join: a few rows per
	// account and minute, however many requests they stand for.
	rows, err := r.db.QueryContext(ctx, `WITH
		r AS (SELECT account_id, sum(attempts) AS attempts, sum(throttled) AS throttled, sum(sent) AS sent,
			min(first_at) AS first_at, max(last_at) AS last_at
			FROM attempt_rollup WHERE minute >= ?1 AND (CAST(?2 AS BIGINT) = 0 OR campaign_id = ?2) GROUP BY account_id),
		f AS (SELECT account_id, sum(n) AS messages
			FROM attempt_firsts WHERE minute >= ?1 AND prev_account < ?1 AND (CAST(?2 AS BIGINT) = 0 OR campaign_id = ?2) GROUP BY account_id)
		SELECT a.name, r.attempts, r.throttled, coalesce(f.messages, 0), r.sent, r.first_at, r.last_at
		FROM r JOIN accounts a ON a.id = r.account_id LEFT JOIN f ON f.account_id = r.account_id
		WHERE r.attempts > 0`, sinceMinute(since), campaignID)
	if err != nil {
		return nil, fmt.Errorf("account activity: %w", err)
	}
	defer rows.Close()
	out := map[string]Activity{}
	for rows.Next() {
		var (
			name        string
			a           Activity
			first, last int64
		)
		if err := rows.Scan(&name, &a.Attempts, &a.Throttled, &a.Messages, &a.Sent, &first, &last); err != nil {
			return nil, err
		}
		a.First, a.Last = fromNanos(first), fromNanos(last)
		out[name] = a
	}
	return out, rows.Err()
}

// Queue is a campaign's open rows: ready to send now, waiting for a retry
// time, and in flight.
type Queue struct {
	Ready, Waiting, InFlight int
	// WindowWait are the rows waiting for their send window to open,
	// apart from Waiting (a retry time).
	WindowWait int
	Started    time.Time // first request, zero if none
	// NextDue is when the first waiting row (retry or window) comes due,
	// zero when none waits.
	NextDue time.Time
}

// CampaignQueue reads a campaign's queue depth at the store's clock.
func (r *Reader) CampaignQueue(ctx context.Context, id int64) (Queue, error) {
	var (
		q       Queue
		started sql.NullInt64
	)
	// Pending and in-flight rows are counted as they move; the rows waiting
	// for a retry time are a range of the messages_due index, usually
	// short. One statement, so all of it is read from one snapshot.
	var (
		pending, sending int
		nextDue          sql.NullInt64
	)
	err := r.db.QueryRowContext(ctx, `SELECT
		(SELECT coalesce(sum(n), 0) FROM message_counts WHERE campaign_id = ?1 AND state = 'pending'),
		(SELECT coalesce(sum(n), 0) FROM message_counts WHERE campaign_id = ?1 AND state = 'sending'),
		(SELECT count(*) FROM messages WHERE campaign_id = ?1 AND state = 'pending' AND next_attempt_at > ?2),
		(SELECT count(*) FROM messages WHERE campaign_id = ?1 AND state = 'pending' AND next_attempt_at > ?2
			AND window_wait = 1),
		(SELECT min(first_at) FROM attempt_rollup WHERE campaign_id = ?1),
		(SELECT min(next_attempt_at) FROM messages WHERE campaign_id = ?1 AND state = 'pending' AND next_attempt_at > ?2)`,
		id, r.now().UnixNano()).
		Scan(&pending, &sending, &q.Waiting, &q.WindowWait, &started, &nextDue)
	if err != nil {
		return q, fmt.Errorf("campaign %d queue: %w", id, err)
	}
	q.Ready, q.InFlight = pending-q.Waiting, sending
	q.Waiting -= q.WindowWait
	q.Started = fromNullNanos(started)
	q.NextDue = fromNullNanos(nextDue)
	return q, nil
}

// Skipped returns the rows of a campaign's file that were not imported.
func (r *Reader) Skipped(ctx context.Context, id int64) ([]campaign.Skip, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT line, input, reason FROM skipped WHERE campaign_id = ? ORDER BY line`, id)
	if err != nil {
		return nil, fmt.Errorf("list skipped rows: %w", err)
	}
	defer rows.Close()
	var out []campaign.Skip
	for rows.Next() {
		var k campaign.Skip
		if err := rows.Scan(&k.Line, &k.Input, &k.Reason); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// OpenZones counts a campaign's open rows (pending and in flight) by their
// recipients' time zones, as the import stored them (comma-separated IANA
// names; "" for rows with none, imported before the campaign had a send
// window): the groups a forecast with a window sends. It reads every open
// row, so it is for campaigns that have a window.
func (r *Reader) OpenZones(ctx context.Context, id int64) (map[string]int, error) {
	// Each state through its own index (see unindexed).
	rows, err := r.db.QueryContext(ctx, `SELECT coalesce(z.zones, ''), count(*)
		FROM (SELECT zone_set FROM messages WHERE campaign_id = ? AND state = 'pending'
			UNION ALL SELECT zone_set FROM messages WHERE `+r.db.d.unindexed("campaign_id")+` = ? AND state = 'sending') m
		LEFT JOIN zone_sets z ON z.id = m.zone_set GROUP BY m.zone_set, z.zones`, id, id)
	if err != nil {
		return nil, fmt.Errorf("campaign %d open rows by time zone: %w", id, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var (
			zones string
			n     int
		)
		if err := rows.Scan(&zones, &n); err != nil {
			return nil, fmt.Errorf("campaign %d open rows by time zone: %w", id, err)
		}
		out[zones] += n
	}
	return out, rows.Err()
}
