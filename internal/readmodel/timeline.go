package readmodel

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Timeline is a campaign's sending over time, for the HTML report: every
// bucket of Step from Start to the last one with anything in it, empty
// ones included, so a chart draws one point per bucket.
type Timeline struct {
	Start   time.Time // the first bucket's start, in UTC
	Step    time.Duration
	Buckets []TimelineBucket
}

// TimelineBucket is one bucket's requests and failures. Sent and
// Throttled count requests by the minute they were claimed (the rollup
// status reads, attempt_rollup); Failed counts the rows now failed by the
// minute they last changed, so the buckets' Failed add up to the
// campaign's failed count.
type TimelineBucket struct {
	Sent, Throttled, Failed int
}

// timelineSteps are the bucket sizes a timeline may take, in minutes:
// the smallest that keeps it within its points is taken, then whole days.
var timelineSteps = []int64{1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440}

// TimelineStep is the bucket size, in minutes, that spreads span minutes
// over at most maxPoints buckets aligned on the clock (a step divides a
// day, or is whole days).
func TimelineStep(span, maxPoints int64) int64 {
	if maxPoints < 1 {
		maxPoints = 1
	}
	for _, s := range timelineSteps {
		if (span+s-1)/s <= maxPoints {
			return s
		}
	}
	days := (span + 1440*maxPoints - 1) / (1440 * maxPoints)
	return days * 1440
}

// CampaignTimeline reads campaign id's timeline in at most maxPoints
// buckets. The sums run in SQL over the per-minute rollup and the failed
// rows, so a million-row campaign costs its minutes, not its rows.
func (r *Reader) CampaignTimeline(ctx context.Context, id int64, maxPoints int) (Timeline, error) {
	var first, last *int64
	if err := r.db.QueryRowContext(ctx, `SELECT min(m), max(m) FROM (
		SELECT min(minute) AS m FROM attempt_rollup WHERE campaign_id = ?1
		UNION ALL SELECT max(minute) FROM attempt_rollup WHERE campaign_id = ?1
		UNION ALL SELECT min(updated_at) / ?2 FROM messages WHERE campaign_id = ?1 AND state = 'failed'
		UNION ALL SELECT max(updated_at) / ?2 FROM messages WHERE campaign_id = ?1 AND state = 'failed') spans`,
		id, minuteNanos).Scan(&first, &last); err != nil {
		return Timeline{}, fmt.Errorf("campaign %d timeline span: %w", id, err)
	}
	if first == nil || last == nil {
		return Timeline{}, nil
	}
	step := TimelineStep(*last-*first+1, int64(maxPoints))
	start := *first / step
	tl := Timeline{
		Start:   time.Unix(start*step*60, 0).UTC(),
		Step:    time.Duration(step) * time.Minute,
		Buckets: make([]TimelineBucket, *last/step-start+1),
	}
	rows, err := r.db.QueryContext(ctx, `SELECT minute / ?2 AS b, sum(sent), sum(throttled)
		FROM attempt_rollup WHERE campaign_id = ?1 GROUP BY b`, id, step)
	if err != nil {
		return Timeline{}, fmt.Errorf("campaign %d timeline: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var b int64
		var sent, throttled int
		if err := rows.Scan(&b, &sent, &throttled); err != nil {
			return Timeline{}, err
		}
		tl.Buckets[b-start].Sent += sent
		tl.Buckets[b-start].Throttled += throttled
	}
	if err := rows.Err(); err != nil {
		return Timeline{}, err
	}
	// A failed row's last change is its failure: the request's answer or
	// the failed status webhook.
	frows, err := r.db.QueryContext(ctx, `SELECT coalesce(updated_at, 0) / ?2 AS b, count(*)
		FROM messages WHERE campaign_id = ?1 AND state = 'failed' GROUP BY b`, id, step*minuteNanos)
	if err != nil {
		return Timeline{}, fmt.Errorf("campaign %d failures over time: %w", id, err)
	}
	defer frows.Close()
	for frows.Next() {
		var b int64
		var n int
		if err := frows.Scan(&b, &n); err != nil {
			return Timeline{}, err
		}
		// A row failed without a time (none is written so) counts in the
		// first bucket rather than nowhere.
		i := min(max(b-start, 0), int64(len(tl.Buckets)-1))
		tl.Buckets[i].Failed += n
	}
	return tl, frows.Err()
}

// PhonePrefix is a campaign's recipients whose E.164 number starts with
// Prefix ("+" and a few digits), with Sample the smallest of those numbers:
// a number's country is read from it (the report's, not SQL's, job).
type PhonePrefix struct {
	Prefix, Sample                    string
	Recipients, Sent, Failed          int
	Delivered, Read, Replied, Expired int
}

// PhonePrefixes groups campaign id's recipients by the first digits of
// their number (digits after the "+"): one scan of the campaign's rows,
// at most 10^digits groups. Sent counts the rows accepted (state sent, or
// failed after send), as the delivery figures do.
func (r *Reader) PhonePrefixes(ctx context.Context, id int64, digits int) ([]PhonePrefix, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT `+r.db.d.bytewise("substr(phone, 1, ?2 + 1)")+` AS p, min(`+r.db.d.bytewise("phone")+`), count(*),
		count(CASE WHEN state = 'sent' OR failed_after_send = 1 THEN 1 END), count(CASE WHEN state = 'failed' THEN 1 END),
		count(CASE WHEN `+receivedIn("delivery")+` THEN 1 END), count(CASE WHEN delivery = '`+string(campaign.DeliveryRead)+`' THEN 1 END),
		count(first_reply_at), count(CASE WHEN state = 'expired' THEN 1 END)
		FROM messages WHERE campaign_id = ?1 GROUP BY p ORDER BY count(*) DESC, p`, id, digits)
	if err != nil {
		return nil, fmt.Errorf("campaign %d recipients by number prefix: %w", id, err)
	}
	defer rows.Close()
	var out []PhonePrefix
	for rows.Next() {
		var p PhonePrefix
		if err := rows.Scan(&p.Prefix, &p.Sample, &p.Recipients, &p.Sent, &p.Failed,
			&p.Delivered, &p.Read, &p.Replied, &p.Expired); err != nil {
			return nil, fmt.Errorf("campaign %d recipients by number prefix: %w", id, err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
