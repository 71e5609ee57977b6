package clock

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 23, 59, 0, 0, time.UTC)

// TestSim runs each case's steps on a fresh clock standing at t0 and checks
// the time after every step and the jumps its OnAdvance hook saw.
func TestSim(t *testing.T) {
	type jump struct{ from, to time.Time }
	type step struct {
		do      func(c *Sim)
		want    time.Time
		wantHop *jump // the hook's call for this step; nil: no call
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"advance moves forward", []step{
			{func(c *Sim) { c.Advance(time.Minute) }, t0.Add(time.Minute), &jump{t0, t0.Add(time.Minute)}},
			{func(c *Sim) { c.Advance(time.Second) }, t0.Add(time.Minute + time.Second), &jump{t0.Add(time.Minute), t0.Add(time.Minute + time.Second)}},
		}},
		{"advance by zero or less does nothing", []step{
			{func(c *Sim) { c.Advance(0) }, t0, nil},
			{func(c *Sim) { c.Advance(-time.Hour) }, t0, nil},
		}},
		{"advance to a later time", []step{
			{func(c *Sim) { c.AdvanceTo(t0.Add(time.Hour)) }, t0.Add(time.Hour), &jump{t0, t0.Add(time.Hour)}},
		}},
		{"advance to the same or an earlier time does nothing", []step{
			{func(c *Sim) { c.AdvanceTo(t0) }, t0, nil},
			{func(c *Sim) { c.AdvanceTo(t0.Add(-time.Hour)) }, t0, nil},
		}},
		{"set moves either way without the hook", []step{
			{func(c *Sim) { c.Set(t0.Add(-24 * time.Hour)) }, t0.Add(-24 * time.Hour), nil},
			{func(c *Sim) { c.Set(t0.Add(time.Hour)) }, t0.Add(time.Hour), nil},
			{func(c *Sim) { c.Advance(time.Minute) }, t0.Add(time.Hour + time.Minute), &jump{t0.Add(time.Hour), t0.Add(time.Hour + time.Minute)}},
		}},
		{"after jumps at once and delivers the new time", []step{
			{func(c *Sim) {
				if got := <-c.After(2 * time.Minute); !got.Equal(t0.Add(2 * time.Minute)) {
					t.Errorf("After delivered %v, want %v", got, t0.Add(2*time.Minute))
				}
			}, t0.Add(2 * time.Minute), &jump{t0, t0.Add(2 * time.Minute)}},
			{func(c *Sim) {
				if got := <-c.After(0); !got.Equal(t0.Add(2 * time.Minute)) {
					t.Errorf("After(0) delivered %v, want %v", got, t0.Add(2*time.Minute))
				}
			}, t0.Add(2 * time.Minute), nil},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewSim(t0)
			var hops []jump
			c.OnAdvance = func(from, to time.Time) {
				if !c.Now().Equal(to) {
					t.Errorf("hook ran with the clock at %v, want %v", c.Now(), to)
				}
				hops = append(hops, jump{from, to})
			}
			for i, st := range tt.steps {
				hops = nil
				st.do(c)
				if got := c.Now(); !got.Equal(st.want) {
					t.Errorf("step %d: Now() = %v, want %v", i, got, st.want)
				}
				switch {
				case st.wantHop == nil && len(hops) != 0:
					t.Errorf("step %d: hook ran %v, want no call", i, hops)
				case st.wantHop != nil && (len(hops) != 1 || !hops[0].from.Equal(st.wantHop.from) || !hops[0].to.Equal(st.wantHop.to)):
					t.Errorf("step %d: hook ran %v, want once with %v", i, hops, *st.wantHop)
				}
			}
		})
	}
}

// TestSimWithoutHook checks that a clock with no OnAdvance moves all the same.
func TestSimWithoutHook(t *testing.T) {
	c := NewSim(t0)
	c.Advance(time.Hour)
	c.AdvanceTo(t0.Add(2 * time.Hour))
	<-c.After(time.Minute)
	if want := t0.Add(2*time.Hour + time.Minute); !c.Now().Equal(want) {
		t.Fatalf("Now() = %v, want %v", c.Now(), want)
	}
}

// TestClocks checks that both clocks are Clocks and that the real one reads
// the wall clock and waits for real (a nanosecond).
func TestClocks(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    Clock
	}{
		{"real", Real{}},
		{"sim", NewSim(t0)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.c.Now()
			got := <-tt.c.After(time.Nanosecond)
			if got.Before(before) {
				t.Fatalf("After delivered %v, before Now() %v", got, before)
			}
		})
	}
}
