package hostshare

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/ratelimit"
)

func TestSharedSuppressions(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	sh := openShared(t, srv)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	sp := func(phone, reason string, first time.Time) Suppression {
		return Suppression{Phone: phone, Reason: reason, CreatedAt: first}
	}
	// Steps on one Redis, as store.TestSuppressions on one database: the
	// shared list keeps the local list's rules. wantChanges are the
	// changes after the version seen before the step.
	steps := []struct {
		name        string
		at          time.Time
		add         []Suppression
		remove      []string
		wantAdded   int
		wantRemoved int
		want        []Suppression
		wantChanges []string // phone, "+reason" or "-" for removed
	}{
		{
			name: "add", at: at(0),
			add:         []Suppression{{Phone: "+4915100000002", Reason: "STOP received"}, {Phone: "+4915100000001"}},
			wantAdded:   2,
			want:        []Suppression{sp("+4915100000001", "", at(0)), sp("+4915100000002", "STOP received", at(0))},
			wantChanges: []string{"+4915100000002 +STOP received", "+4915100000001 +"},
		},
		{
			name: "re-add keeps first time; a given reason replaces, an empty one does not", at: at(time.Hour),
			add:       []Suppression{{Phone: "+4915100000001", Reason: "bounced"}, {Phone: "+4915100000002"}, {Phone: "+4915100000003"}},
			wantAdded: 1,
			want: []Suppression{sp("+4915100000001", "bounced", at(0)), sp("+4915100000002", "STOP received", at(0)),
				sp("+4915100000003", "", at(time.Hour))},
			wantChanges: []string{"+4915100000001 +bounced", "+4915100000003 +"},
		},
		{
			name: "remove listed, unlisted and repeated: each is recorded removed", at: at(2 * time.Hour),
			remove:      []string{"+4915100000003", "+4915100000009", "+4915100000001", "+4915100000001"},
			wantRemoved: 2,
			want:        []Suppression{sp("+4915100000002", "STOP received", at(0))},
			wantChanges: []string{"+4915100000003 -", "+4915100000009 -", "+4915100000001 -"},
		},
		{
			name: "removed then added again starts anew", at: at(3 * time.Hour),
			add:         []Suppression{{Phone: "+4915100000001"}},
			wantAdded:   1,
			want:        []Suppression{sp("+4915100000001", "", at(3*time.Hour)), sp("+4915100000002", "STOP received", at(0))},
			wantChanges: []string{"+4915100000001 +"},
		},
	}
	var since int64
	for _, s := range steps {
		added, err := sh.Suppress(ctx, s.add, s.at)
		if err != nil || added != s.wantAdded {
			t.Fatalf("%s: Suppress = %d, %v; want %d", s.name, added, err, s.wantAdded)
		}
		removed, err := sh.Unsuppress(ctx, s.remove)
		if err != nil || removed != s.wantRemoved {
			t.Fatalf("%s: Unsuppress = %d, %v; want %d", s.name, removed, err, s.wantRemoved)
		}
		got, err := sh.Suppressions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, s.want, func(a, b Suppression) bool {
			return a.Phone == b.Phone && a.Reason == b.Reason && a.CreatedAt.Equal(b.CreatedAt)
		}) {
			t.Errorf("%s: list = %v, want %v", s.name, got, s.want)
		}
		epoch, changes, err := sh.SuppressionChanges(ctx, since, 100)
		if err != nil {
			t.Fatal(err)
		}
		if epoch == "" {
			t.Errorf("%s: no epoch after a change", s.name)
		}
		var gotChanges []string
		for _, c := range changes {
			if c.Version <= since {
				t.Errorf("%s: change %+v not after version %d", s.name, c, since)
			}
			since = c.Version
			if c.Removed {
				gotChanges = append(gotChanges, c.Phone+" -")
			} else {
				gotChanges = append(gotChanges, c.Phone+" +"+c.Reason)
			}
		}
		if !slices.Equal(gotChanges, s.wantChanges) {
			t.Errorf("%s: changes = %q, want %q", s.name, gotChanges, s.wantChanges)
		}
	}
}

func TestSharedSuppressionsPaged(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	sh := openShared(t, srv)
	// More than one script call's worth: every number gets its own
	// version, so pages of 1,000 read each exactly once.
	var list []Suppression
	for i := range suppressBatch + 500 {
		list = append(list, Suppression{Phone: fmt.Sprintf("+4915100%05d", i)})
	}
	if added, err := sh.Suppress(ctx, list, time.Unix(0, 0)); err != nil || added != len(list) {
		t.Fatalf("Suppress = %d, %v; want %d", added, err, len(list))
	}
	seen := map[string]int{}
	var since int64
	for {
		_, changes, err := sh.SuppressionChanges(ctx, since, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) == 0 {
			break
		}
		for _, c := range changes {
			seen[c.Phone]++
		}
		since = changes[len(changes)-1].Version
	}
	if len(seen) != len(list) {
		t.Errorf("read %d numbers, want %d", len(seen), len(list))
	}
	for p, n := range seen {
		if n != 1 {
			t.Errorf("%s read %d times", p, n)
		}
	}
}

func TestSharedBadInput(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	sh := openShared(t, srv)
	for _, tc := range []struct {
		name string
		do   func() error
		want string
	}{
		{"suppress a national number", func() error {
			_, err := sh.Suppress(ctx, []Suppression{{Phone: "015112345678"}}, time.Now())
			return err
		}, "not an E.164 number"},
		{"remove a number with letters", func() error { _, err := sh.Unsuppress(ctx, []string{"+49abc"}); return err }, "not an E.164 number"},
		{"unknown tier", func() error { return sh.SetTier(ctx, "gold", campaign.Limits{Rate: 1, Burst: 1}) }, "tier \"gold\""},
		{"zero rate", func() error { return sh.SetTier(ctx, "new", campaign.Limits{Burst: 1}) }, "rate 0"},
		{"global burst 0", func() error { return sh.SetGlobal(ctx, true, ratelimit.Limit{Rate: 1}) }, "burst 0"},
	} {
		if err := tc.do(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	if l, _ := sh.Suppressions(ctx); len(l) != 0 {
		t.Errorf("list after refused input: %v", l)
	}
	if c, err := sh.Config(ctx); err != nil || len(c.Tiers) != 0 || c.Global != nil {
		t.Errorf("config after refused input: %+v, %v", c, err)
	}
	// A value someone wrote by hand that does not parse is refused whole.
	srv.Client(t).HSet(ctx, configKey, "tier:new", "fast 5 50")
	if _, err := sh.Config(ctx); err == nil || !strings.Contains(err.Error(), "tier:new") {
		t.Errorf("Config with a bad tier = %v, want an error naming tier:new", err)
	}
}

func TestSharedConfig(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	sh := openShared(t, srv)
	c, err := sh.Config(ctx)
	if err != nil || c.Version != 0 || len(c.Tiers) != 0 || c.Global != nil {
		t.Fatalf("empty config = %+v, %v", c, err)
	}
	warm := campaign.Limits{Rate: 1.0 / 3, Burst: 4, DailyCap: 90}
	if err := sh.SetTier(ctx, "warm", warm); err != nil {
		t.Fatal(err)
	}
	if err := sh.SetGlobal(ctx, true, ratelimit.Limit{Rate: 2.5, Burst: 10}); err != nil {
		t.Fatal(err)
	}
	c, err = sh.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != 2 || c.Tiers["warm"] != warm || len(c.Tiers) != 1 || c.Global == nil || *c.Global != (GlobalSetting{On: true, Limit: ratelimit.Limit{Rate: 2.5, Burst: 10}}) {
		t.Errorf("config = %+v (global %+v), want version 2, warm %+v, global 2.5/10", c, c.Global, warm)
	}
	if err := sh.SetGlobal(ctx, false, ratelimit.Limit{}); err != nil {
		t.Fatal(err)
	}
	if c, _ = sh.Config(ctx); c.Version != 3 || c.Global == nil || c.Global.On {
		t.Errorf("after off: %+v (global %+v), want version 3 and off", c, c.Global)
	}

	srv.Kill()
	if err := sh.SetTier(ctx, "new", warm); !errors.Is(err, ErrUnavailable) {
		t.Errorf("SetTier with Redis down = %v, want ErrUnavailable", err)
	}
	if _, err := sh.Suppress(ctx, []Suppression{{Phone: "+4915100000001"}}, time.Now()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Suppress with Redis down = %v, want ErrUnavailable", err)
	}
}

// TestSharedPush: what a host suppressed by itself goes on the list — an
// opt-out whatever the list knew, a number listed by hand only if the
// list never knew it — and a number already listed keeps its entry.
func TestSharedPush(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	sh := openShared(t, srv)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	const (
		listed  = "+4915100000001"
		removed = "+4915100000002"
		unknown = "+4915100000003"
	)
	if _, err := sh.Suppress(ctx, []Suppression{{Phone: listed, Reason: "STOP"}, {Phone: removed}}, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := sh.Unsuppress(ctx, []string{removed}); err != nil {
		t.Fatal(err)
	}
	push := func(phone string, ifUnknown bool) Pushed {
		return Pushed{Suppression: Suppression{Phone: phone, Reason: "pushed", CreatedAt: t0.Add(time.Hour)}, IfUnknown: ifUnknown}
	}
	tests := []struct {
		name      string
		push      Pushed
		wantAdded int
		want      string // the number's entry after, "" for not listed
	}{
		{"listed: kept as it is", push(listed, false), 0, "STOP " + t0.String()},
		{"removed, by hand: stays removed", push(removed, true), 0, ""},
		{"unknown, by hand: listed", push(unknown, true), 1, "pushed " + t0.Add(time.Hour).String()},
		{"removed, an opt-out: listed", push(removed, false), 1, "pushed " + t0.Add(time.Hour).String()},
	}
	for _, tt := range tests {
		added, err := sh.Push(ctx, []Pushed{tt.push})
		if err != nil || added != tt.wantAdded {
			t.Errorf("%s: added %d, %v; want %d", tt.name, added, err, tt.wantAdded)
		}
		list, err := sh.Suppressions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, sp := range list {
			if sp.Phone == tt.push.Phone {
				got = sp.Reason + " " + sp.CreatedAt.UTC().String()
			}
		}
		if got != tt.want {
			t.Errorf("%s: entry %q, want %q", tt.name, got, tt.want)
		}
	}
}

// openShared opens the shared lists on srv, closed when t ends.
func openShared(t *testing.T, srv *redistest.Server) *Shared {
	t.Helper()
	sh, err := OpenShared(t.Context(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	return sh
}
