package readmodel_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/storetest"
)

func TestTimelineStep(t *testing.T) {
	for _, tt := range []struct {
		span, points, want int64
	}{
		{1, 1500, 1},
		{1500, 1500, 1},
		{1501, 1500, 2},
		{3000, 1500, 2},
		{3001, 1500, 5},
		{24 * 60, 1500, 1}, // a day, by the minute
		{72 * 60, 1500, 5}, // three days: 864 buckets of 5 minutes
		{1440 * 1500, 1500, 1440},
		{1440*1500 + 1, 1500, 2880}, // beyond, whole days
		{10, 0, 10},                 // no room: one bucket
	} {
		got := readmodel.TimelineStep(tt.span, tt.points)
		if got != tt.want {
			t.Errorf("TimelineStep(%d, %d) = %d, want %d", tt.span, tt.points, got, tt.want)
		}
		if n := (tt.span + got - 1) / got; tt.points > 0 && n > tt.points {
			t.Errorf("TimelineStep(%d, %d) = %d: %d buckets", tt.span, tt.points, got, n)
		}
	}
}

// A campaign sent one row a second over three minutes: its timeline has a
// bucket a minute, or fewer and wider when asked for fewer points, and its
// series add up to the requests sent and throttled and the rows failed
// whatever the bucket.
func TestCampaignTimeline(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := newFakeClock()
		st := b.open(t, clk)
		storetest.MustAccount(t, st, "a", campaign.TierActive, storetest.Limited(1, 4, 1000))
		r := readmodel.New(st)
		empty := storetest.MustCampaign(t, st, "empty", 3)
		if tl, err := r.CampaignTimeline(t.Context(), empty.ID, 1500); err != nil || len(tl.Buckets) != 0 {
			t.Fatalf("a campaign never sent: %+v, %v", tl, err)
		}

		throttledLines := 0
		c, _ := playCampaign(t, st, 150, func(line, attempt int) *campaign.Outcome {
			switch {
			case line%7 == 0 && attempt == 1:
				throttledLines++
				return &campaign.Outcome{Kind: campaign.OutcomeRetry, ErrorCode: 130429, Class: "throttled", Error: "130429 Rate limit hit"}
			case line%10 == 0:
				return &campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Class: "permanent", Error: "undeliverable"}
			}
			return &campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", line), Class: "ok"}
		})
		counts, err := st.Counts(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		d, err := r.CampaignDetail(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantMinutes := int(d.LastAttempt.Truncate(time.Minute).Sub(d.FirstAttempt.Truncate(time.Minute))/time.Minute) + 1
		if wantMinutes < 3 || wantMinutes > 5 {
			t.Fatalf("the campaign spans %d minutes; the test wants 3 to 5", wantMinutes)
		}
		for _, tt := range []struct {
			points   int
			step     time.Duration
			nBuckets int
		}{
			{1500, time.Minute, wantMinutes},
			{(wantMinutes + 1) / 2, 2 * time.Minute, (wantMinutes + 1) / 2}, // from 09:00, an even minute
			{1, 5 * time.Minute, 1},                                         // 09:00 to 09:04 in one 5-minute bucket
		} {
			tl, err := r.CampaignTimeline(t.Context(), c.ID, tt.points)
			if err != nil {
				t.Fatal(err)
			}
			if tl.Step != tt.step || len(tl.Buckets) != tt.nBuckets || !tl.Start.Equal(t0.Truncate(tt.step)) {
				t.Errorf("%d points: step %v, %d buckets from %v; want %v, %d from %v",
					tt.points, tl.Step, len(tl.Buckets), tl.Start, tt.step, tt.nBuckets, t0.Truncate(tt.step))
			}
			var sent, throttled, failed int
			for _, b := range tl.Buckets {
				sent, throttled, failed = sent+b.Sent, throttled+b.Throttled, failed+b.Failed
			}
			if sent != counts[campaign.Sent] || throttled != throttledLines || throttled != d.Stats.Throttled || failed != counts[campaign.Failed] {
				t.Errorf("%d points: %d sent, %d throttled, %d failed; want %d, %d, %d", tt.points, sent, throttled, failed,
					counts[campaign.Sent], throttledLines, counts[campaign.Failed])
			}
		}
		// By the minute: the first minute holds the first 60 claims (one a
		// second from 09:00:00), so 6 of them failed (lines 10, 20, …, 60; the
		// lines are claimed in order, each throttled one again later).
		tl, err := r.CampaignTimeline(t.Context(), c.ID, 1500)
		if err != nil {
			t.Fatal(err)
		}
		if b := tl.Buckets[0]; b.Sent+b.Throttled+b.Failed != 60 {
			t.Errorf("first minute: %+v, want 60 requests in all", b)
		}
	})
}

func TestPhonePrefixes(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := newFakeClock()
		st := b.open(t, clk)
		storetest.MustAccount(t, st, "a", campaign.TierActive, storetest.Limited(1, 4, 1000))
		c, _ := playCampaign(t, st, 12, func(line, attempt int) *campaign.Outcome {
			if line == 5 {
				return &campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Class: "permanent", Error: "undeliverable"}
			}
			return &campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", line), Class: "ok"}
		})
		got, err := readmodel.New(st).PhonePrefixes(t.Context(), c.ID, 12)
		if err != nil {
			t.Fatal(err)
		}
		// storetest.Phone(i) is +4915100 and six digits: 12 digits tell
		// +491510000000 (lines 2…11) from +491510000001 (lines 12, 13).
		want := []readmodel.PhonePrefix{
			{Prefix: "+491510000000", Sample: "+4915100000000", Recipients: 10, Sent: 9, Failed: 1},
			{Prefix: "+491510000001", Sample: "+4915100000010", Recipients: 2, Sent: 2},
		}
		if len(got) != len(want) {
			t.Fatalf("prefixes = %+v, want %+v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("prefix %d = %+v, want %+v", i, got[i], want[i])
			}
		}
	})
}
