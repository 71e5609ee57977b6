package claim

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/storetest"
)

// process is one process's claim loop in a simulation over one database: it
// asks for up to batch rows of its campaign, records what it got as sent
// at once, and asks again think later; refused, it asks again when the
// wait ends, at most poll later, as the engine does.
type process struct {
	name   string
	id     int64
	batch  int
	think  time.Duration
	next   time.Duration // when it asks next
	sent   []time.Duration
	done   bool
	runner string
}

const poll = time.Second

// simulate runs the processes' loops on a simulated clock from 0 to end:
// whichever asks first goes first, ties in the order given.
func simulate(t *testing.T, st *store.Store, now *time.Time, end time.Duration, ps ...*process) {
	t.Helper()
	l := New(st)
	for i, p := range ps {
		p.runner = fmt.Sprint("r", i)
		if err := st.RegisterRunner(t.Context(), campaign.Runner{ID: p.runner, CampaignID: p.id, Host: "h", PID: i + 1, StartedAt: t0, HeartbeatAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	for {
		var p *process
		for _, q := range ps {
			if !q.done && (p == nil || q.next < p.next) {
				p = q
			}
		}
		if p == nil || p.next > end {
			return
		}
		*now = t0.Add(p.next)
		if err := st.Heartbeat(t.Context(), p.runner, *now); err != nil {
			t.Fatal(err)
		}
		cs, err := l.ClaimN(t.Context(), p.id, p.runner, *now, p.batch)
		var we *campaign.WaitError
		switch {
		case err == nil:
			rs := make([]campaign.Result, len(cs))
			for i, c := range cs {
				rs[i] = campaign.Result{Claim: c, Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("w", c.Message.ID)}, At: *now}
				p.sent = append(p.sent, p.next)
			}
			if err := st.RecordAll(t.Context(), p.runner, rs); err != nil {
				t.Fatal(err)
			}
			p.next += p.think
		case errors.Is(err, campaign.ErrDone):
			p.done = true
		case errors.As(err, &we):
			wait := poll
			if !we.Until.IsZero() {
				wait = min(max(we.Until.Sub(*now), time.Millisecond), poll)
			}
			p.next += wait
		default:
			t.Fatalf("%s at %v: %v", p.name, p.next, err)
		}
	}
}

// rowsFor imports a campaign of n recipients of its own (the k-th block of
// numbers), so campaigns never share a recipient.
func rowsFor(t *testing.T, st *store.Store, k int, name string, n int, sch campaign.Schedule) campaign.Campaign {
	t.Helper()
	im, err := st.Import(t.Context(), campaign.Campaign{
		Name: name, Fingerprint: "fp-" + name, Source: name + ".csv", Schedule: sch,
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "hello", Lang: "en_US", Params: []string{"name"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	for i := range n {
		phone := storetest.Phone(k*100000 + i)
		if reason, err := im.Add(t.Context(), campaign.Message{Line: i + 2, Input: phone, Phone: phone, Params: []string{"P"}, Zones: "UTC"}); err != nil || reason != "" {
			t.Fatalf("add line %d: %q, %v", i+2, reason, err)
		}
	}
	c, err := im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// between counts the claims made in [from, to].
func between(sent []time.Duration, from, to time.Duration) int {
	n := 0
	for _, at := range sent {
		if at >= from && at <= to {
			n++
		}
	}
	return n
}

// Three processes, each with its own campaign of equal weight, on three
// numbers at 30, 40 and 50 msg/s, asking at their own moments: the numbers
// send every token they earn, and each campaign gets a third of them. With
// the turn strict (a campaign one token ahead waits for the one behind to
// ask) the numbers were used about half the time.
func TestEqualWeightsShareEveryToken(t *testing.T) {
	now := t0
	st := openStore(t, &now)
	rate := 0.0
	for i, r := range []float64{30, 40, 50} {
		storetest.MustAccount(t, st, fmt.Sprint("n", i), campaign.TierActive, storetest.Limited(r, int(r), 1000000))
		rate += r
	}
	const end = 10 * time.Second
	var ps []*process
	for k, think := range []time.Duration{23 * time.Millisecond, 37 * time.Millisecond, 61 * time.Millisecond} {
		c := rowsFor(t, st, k, fmt.Sprint("c", k), 2000, campaign.Schedule{})
		ps = append(ps, &process{name: c.Name, id: c.ID, batch: 16, think: think})
	}
	simulate(t, st, &now, end, ps...)

	total := 0
	for _, p := range ps {
		total += len(p.sent)
	}
	t.Logf("%d tokens taken in %v at %g/s: the numbers used %.3f of the time; shares %d, %d, %d",
		total, end, rate, (float64(total)-rate)/(rate*end.Seconds()), len(ps[0].sent), len(ps[1].sent), len(ps[2].sent))
	// The first second's burst, then every token earned.
	if want := rate * end.Seconds(); float64(total)-rate < 0.95*want {
		t.Errorf("%d tokens taken in %v at %g/s: the numbers used %.2f of the time, want ≥ 0.95", total, end, rate, (float64(total)-rate)/want)
	}
	for _, p := range ps {
		if share := float64(len(p.sent)) / float64(total); math.Abs(share*3-1) > 0.1 {
			t.Errorf("%s took %d of %d tokens (%.3f), want a third ± 10 %%", p.name, len(p.sent), total, share)
		}
	}
}

// A campaign behind that cannot send never holds back the one ahead: its
// window is closed, its rows are all in flight, or the only number it may
// use is capped. The one ahead sends every token of its numbers.
func TestBehindThatCannotSendNeverStalls(t *testing.T) {
	closed := campaign.Schedule{DefaultTZ: "UTC", Window: &campaign.Window{From: 20 * 60, To: 21 * 60, Days: campaign.EveryDay}}
	tests := []struct {
		name  string
		sch   campaign.Schedule
		setup func(t *testing.T, st *store.Store, l *Ledger, behind campaign.Campaign)
	}{
		{"its window is closed", closed, nil},
		{"its rows are all in flight", campaign.Schedule{}, func(t *testing.T, st *store.Store, l *Ledger, behind campaign.Campaign) {
			if cs, err := l.ClaimN(t.Context(), behind.ID, "r1", t0, 3); err != nil || len(cs) != 3 {
				t.Fatalf("claim every row of %s: %d, %v", behind.Name, len(cs), err)
			}
		}},
		{"its only number is capped", campaign.Schedule{}, func(t *testing.T, st *store.Store, l *Ledger, behind campaign.Campaign) {
			for _, name := range []string{"y", "z"} {
				if err := st.DropAccount(t.Context(), behind.ID, storetest.AccountByName(t, st, name).ID, "test", 0, t0); err != nil {
					t.Fatal(err)
				}
			}
			// x's cap of 2, spent by the campaign behind.
			cs, err := l.ClaimN(t.Context(), behind.ID, "r1", t0, 2)
			if err != nil || len(cs) != 2 {
				t.Fatalf("claim x's cap: %d, %v", len(cs), err)
			}
			rs := []campaign.Result{{Claim: cs[0], Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "w1"}, At: t0},
				{Claim: cs[1], Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "w2"}, At: t0}}
			if err := st.RecordAll(t.Context(), "r1", rs); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := t0
			st := openStore(t, &now)
			storetest.MustAccount(t, st, "x", campaign.TierActive, storetest.Limited(10, 2, 2))
			storetest.MustAccount(t, st, "y", campaign.TierActive, storetest.Limited(10, 1, 1000000))
			storetest.MustAccount(t, st, "z", campaign.TierActive, storetest.Limited(10, 1, 1000000))
			behind := rowsFor(t, st, 0, "behind", 3, tt.sch)
			if tt.setup != nil {
				tt.setup(t, st, New(st), behind)
			}
			ahead := rowsFor(t, st, 1, "ahead", 1000, campaign.Schedule{})
			const end = 20 * time.Second
			a := &process{name: "ahead", id: ahead.ID, batch: 4, think: 10 * time.Millisecond}
			b := &process{name: "behind", id: behind.ID, batch: 4, think: 10 * time.Millisecond}
			simulate(t, st, &now, end, a, b)
			if len(b.sent) != 0 {
				t.Fatalf("the campaign behind sent %d; the case wants it unable to", len(b.sent))
			}
			// y and z at 10/s each (x, when not capped, is the ahead one's too).
			if got, want := len(a.sent), 0.95*20*end.Seconds(); float64(got) < want {
				t.Errorf("the campaign ahead sent %d in %v, want ≥ %.0f (its numbers' tokens)", got, end, want)
			}
		})
	}
}

// A high campaign takes every token while it has rows, whichever process
// asks first; the normal ones share what is left and the numbers stay
// busy throughout.
func TestPriorityHoldsAcrossProcesses(t *testing.T) {
	now := t0
	st := openStore(t, &now)
	storetest.MustAccount(t, st, "a", campaign.TierActive, storetest.Limited(20, 20, 1000000))
	storetest.MustAccount(t, st, "b", campaign.TierActive, storetest.Limited(20, 20, 1000000))
	n1 := rowsFor(t, st, 0, "normal-1", 1000, campaign.Schedule{})
	high := rowsFor(t, st, 1, "high", 200, campaign.Schedule{})
	n2 := rowsFor(t, st, 2, "normal-2", 1000, campaign.Schedule{})
	pr := campaign.High
	if err := st.SetShare(t.Context(), high.ID, campaign.ShareChange{Priority: &pr}); err != nil {
		t.Fatal(err)
	}
	ps := []*process{
		{name: "normal-1", id: n1.ID, batch: 8, think: 13 * time.Millisecond},
		{name: "high", id: high.ID, batch: 8, think: 29 * time.Millisecond},
		{name: "normal-2", id: n2.ID, batch: 8, think: 17 * time.Millisecond},
	}
	const end = 15 * time.Second
	simulate(t, st, &now, end, ps...)

	h := ps[1]
	if len(h.sent) != 200 {
		t.Fatalf("high sent %d of its 200", len(h.sent))
	}
	first, last := h.sent[0], h.sent[len(h.sent)-1]
	for _, p := range []*process{ps[0], ps[2]} {
		if n := between(p.sent, first+time.Nanosecond, last-time.Nanosecond); n > 0 {
			t.Errorf("%s took %d tokens while high had rows, between %v and %v", p.name, n, first, last)
		}
	}
	// 40/s: high's 200 in about 5 s from the first burst of 40.
	if last > 5*time.Second {
		t.Errorf("high's last token at %v, want by 5 s", last)
	}
	after := []int{between(ps[0].sent, last, end), between(ps[2].sent, last, end)}
	if total := float64(after[0] + after[1]); total < 0.95*40*(end-last-time.Second).Seconds() {
		t.Errorf("after high: %v tokens in %v at 40/s", after, end-last)
	} else if d := float64(after[0]-after[1]) / total; math.Abs(d) > 0.1 {
		t.Errorf("after high, normal-1 and normal-2 took %v: want even ± 10 %%", after)
	}
}

// A token that only the campaign ahead may use goes to it, however far
// behind the others are: a campaign limited to number x does not hold
// back another's sends from y and z, and still gets its share of x.
func TestNumbersOnlyTheOneAheadUses(t *testing.T) {
	now := t0
	st := openStore(t, &now)
	for _, name := range []string{"x", "y", "z"} {
		storetest.MustAccount(t, st, name, campaign.TierActive, storetest.Limited(10, 10, 1000000))
	}
	onX := rowsFor(t, st, 0, "on-x", 1000, campaign.Schedule{})
	all := rowsFor(t, st, 1, "all", 1000, campaign.Schedule{})
	for _, name := range []string{"y", "z"} {
		if err := st.DropAccount(t.Context(), onX.ID, storetest.AccountByName(t, st, name).ID, "test", 0, t0); err != nil {
			t.Fatal(err)
		}
	}
	x := &process{name: "on-x", id: onX.ID, batch: 8, think: 19 * time.Millisecond}
	a := &process{name: "all", id: all.ID, batch: 8, think: 23 * time.Millisecond}
	const end = 20 * time.Second
	simulate(t, st, &now, end, x, a)

	if total, want := len(x.sent)+len(a.sent), 0.95*30*end.Seconds(); float64(total)-30 < want {
		t.Errorf("%d tokens taken in %v at 30/s (on-x %d, all %d): want ≥ %.0f", total, end, len(x.sent), len(a.sent), want)
	}
	// x's 10/s: on-x gets at least half of them.
	if got, want := len(x.sent), 0.95*5*end.Seconds(); float64(got) < want {
		t.Errorf("on-x took %d of x's tokens in %v, want ≥ %.0f (half of them)", got, end, want)
	}
}

// A high campaign limited to number x takes every token of x; a low one
// sends from y and z meanwhile, not held back by a class that cannot use
// them.
func TestHigherClassHoldsOnlyItsNumbers(t *testing.T) {
	now := t0
	st := openStore(t, &now)
	for _, name := range []string{"x", "y", "z"} {
		storetest.MustAccount(t, st, name, campaign.TierActive, storetest.Limited(10, 10, 1000000))
	}
	high := rowsFor(t, st, 0, "high", 1000, campaign.Schedule{})
	low := rowsFor(t, st, 1, "low", 1000, campaign.Schedule{})
	pr := campaign.High
	if err := st.SetShare(t.Context(), high.ID, campaign.ShareChange{Priority: &pr}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"y", "z"} {
		if err := st.DropAccount(t.Context(), high.ID, storetest.AccountByName(t, st, name).ID, "test", 0, t0); err != nil {
			t.Fatal(err)
		}
	}
	h := &process{name: "high", id: high.ID, batch: 8, think: 19 * time.Millisecond}
	l := &process{name: "low", id: low.ID, batch: 8, think: 23 * time.Millisecond}
	const end = 20 * time.Second
	simulate(t, st, &now, end, h, l)
	t.Logf("high %d, low %d tokens in %v", len(h.sent), len(l.sent), end)

	if got, want := len(h.sent), 10*end.Seconds(); float64(got) < want {
		t.Errorf("high took %d of x's tokens in %v, want every one (≥ %.0f)", got, end, want)
	}
	if got, want := len(l.sent), 0.95*20*end.Seconds(); float64(got) < want {
		t.Errorf("low took %d tokens of y and z in %v, want ≥ %.0f", got, end, want)
	}
}

// Weights 1, 2 and 3 across three processes: the numbers send every token,
// and each campaign's part is its weight's, within 10 %.
func TestWeightsShareEveryToken(t *testing.T) {
	now := t0
	st := openStore(t, &now)
	for i, r := range []float64{30, 40, 50} {
		storetest.MustAccount(t, st, fmt.Sprint("n", i), campaign.TierActive, storetest.Limited(r, int(r), 1000000))
	}
	const end = 10 * time.Second
	var ps []*process
	for k, think := range []time.Duration{23 * time.Millisecond, 37 * time.Millisecond, 61 * time.Millisecond} {
		c := rowsFor(t, st, k, fmt.Sprint("c", k), 2000, campaign.Schedule{})
		w := k + 1
		if err := st.SetShare(t.Context(), c.ID, campaign.ShareChange{Weight: &w}); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, &process{name: c.Name, id: c.ID, batch: 16, think: think})
	}
	simulate(t, st, &now, end, ps...)

	total := len(ps[0].sent) + len(ps[1].sent) + len(ps[2].sent)
	t.Logf("%d tokens: %d, %d, %d", total, len(ps[0].sent), len(ps[1].sent), len(ps[2].sent))
	if float64(total)-120 < 0.95*120*end.Seconds() {
		t.Errorf("%d tokens taken in %v at 120/s, want ≥ 0.95 of them", total, end)
	}
	for k, p := range ps {
		want := float64(k+1) / 6
		if share := float64(len(p.sent)) / float64(total); math.Abs(share/want-1) > 0.1 {
			t.Errorf("%s (weight %d) took %d of %d tokens (%.3f), want %.3f ± 10 %%", p.name, k+1, len(p.sent), total, share, want)
		}
	}
}
