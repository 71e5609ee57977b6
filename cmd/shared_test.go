package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/hostshare"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

// pullInto is what a sender run with --limits on that host does every
// second: copy the shared state into its database.
func pullInto(t *testing.T, db, url string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, db, driver.Options{Now: func() time.Time { return suppressNow }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sh, err := hostshare.OpenShared(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	if err := hostshare.NewSync(sh, st, hostshare.SyncOptions{}).Pull(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSharedCommands: two hosts (two databases) and one Redis. Commands
// run with --limits on A change the shared list and settings; B lists the
// shared list from Redis at once and has them in its own database after
// its sender's next pull.
func TestSharedCommands(t *testing.T) {
	srv := redistest.Start(t)
	a := newSuppressCLI(t, map[string]string{"WASEND_REGION": "DE"})
	b := newSuppressCLI(t, map[string]string{"WASEND_REGION": "DE"})
	limits := "--limits=" + srv.URL()

	if got, want := a.mustRun("suppress", "add", "0151 23456789", "+447911123456", "--reason", "replied STOP", limits), "added 2, already listed 0\n"; got != want {
		t.Errorf("A: suppress add --limits = %q, want %q", got, want)
	}
	bothListed := "+447911123456\treplied STOP\t2026-03-02 09:30\n+4915123456789\treplied STOP\t2026-03-02 09:30\n"
	if got := a.mustRun("suppress", "list"); got != bothListed {
		t.Errorf("A's own list:\n%swant\n%s", got, bothListed)
	}
	if got := b.mustRun("suppress", "list", limits); got != bothListed {
		t.Errorf("B: suppress list --limits (Redis):\n%swant\n%s", got, bothListed)
	}
	if got := b.mustRun("suppress", "list"); got != "" {
		t.Errorf("B's own list before a pull:\n%s", got)
	}
	pullInto(t, b.db, srv.URL())
	if got := b.mustRun("suppress", "list"); got != bothListed {
		t.Errorf("B's own list after a pull:\n%swant\n%s", got, bothListed)
	}

	// The environment works as the flag does; a removal reaches B too.
	a.env["WASEND_LIMITS"] = srv.URL()
	if got, want := a.mustRun("suppress", "remove", "+447911123456"), "removed 1, not listed 0\n"; got != want {
		t.Errorf("A: suppress remove (WASEND_LIMITS) = %q, want %q", got, want)
	}
	csv := writeSuppressFixture(t, "optouts.csv", "phone\n0171 9876543\n0151 23456789\n")
	if got, want := a.mustRun("suppress", "import", csv), "added 1, already listed 1, skipped 0\n"; got != want {
		t.Errorf("A: suppress import (WASEND_LIMITS) = %q, want %q", got, want)
	}
	delete(a.env, "WASEND_LIMITS")
	pullInto(t, b.db, srv.URL())
	want := "+4915123456789\treplied STOP\t2026-03-02 09:30\n+491719876543\t-\t2026-03-02 09:30\n"
	if got := b.mustRun("suppress", "list"); got != want {
		t.Errorf("B's own list after remove and import on A:\n%swant\n%s", got, want)
	}

	// A third host imports a file under --limits: the shared list is copied
	// in first, so the import skips what A listed.
	c := newSuppressCLI(t, map[string]string{"WASEND_REGION": "DE"})
	list := writeSuppressFixture(t, "list.csv", "phone,name\n0151 23456789,Ann\n0151 11111111,Bob\n")
	c.mustRun("campaign", "import", list, "--template", "t", "--lang", "en", "--params", "name", limits)
	if got := c.mustRun("campaign", "skipped", "1"); !strings.Contains(got, "0151 23456789\tsuppressed: replied STOP") {
		t.Errorf("C: skipped rows of the import under --limits:\n%s\nwant line 2 suppressed: replied STOP", got)
	}

	// Hot configuration: a tier and the global limit set on A reach B.
	a.mustRun("tier", "set", "new", "--every", "10s", "--daily-cap", "80", limits)
	a.mustRun("limit", "global", "--rate", "2", "--burst", "10", limits)
	// A second change on another host starts from the shared value.
	b.mustRun("tier", "set", "new", "--burst", "7", limits)
	pullInto(t, b.db, srv.URL())
	pullInto(t, a.db, srv.URL())
	for name, host := range map[string]*suppressCLI{"A": a, "B": b} {
		var tiers []struct {
			Name     string  `json:"name"`
			Rate     float64 `json:"rate_per_second"`
			Burst    int     `json:"burst"`
			DailyCap int     `json:"daily_cap"`
		}
		if err := json.Unmarshal([]byte(host.mustRun("tier", "list", "--json")), &tiers); err != nil {
			t.Fatal(err)
		}
		if tiers[0].Name != "new" || tiers[0].Rate != 0.1 || tiers[0].Burst != 7 || tiers[0].DailyCap != 80 {
			t.Errorf("%s's tier new = %+v, want 1/10s, burst 7, cap 80", name, tiers[0])
		}
		if got, want := host.mustRun("limit", "global"), "global limit: rate 2/s, burst 10, tokens now 10.0\n"; got != want {
			t.Errorf("%s: limit global = %q, want %q", name, got, want)
		}
	}
	a.mustRun("limit", "global", "--off", limits)
	pullInto(t, b.db, srv.URL())
	if got := b.mustRun("limit", "global"); got != "global limit: off\n" {
		t.Errorf("B: limit global after --off on A = %q", got)
	}
}

// TestSharedCommandsRedisDown: with Redis down a change under --limits
// fails, says why, changes nothing locally and never shows the URL's
// password.
func TestSharedCommandsRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	a := newSuppressCLI(t, nil)
	srv.Kill()
	limits := "--limits=redis://:s3cret-pw@" + srv.Addr() + "/0"
	for _, args := range [][]string{
		{"suppress", "add", "+4915123456789"},
		{"suppress", "remove", "+4915123456789"},
		{"suppress", "list"},
		{"tier", "set", "new", "--burst", "3"},
		{"limit", "global", "--off"},
	} {
		out, errOut, code := a.run(append(args, limits)...)
		if code != ExitError || !strings.Contains(errOut, "unavailable") || strings.Contains(out+errOut, "s3cret-pw") {
			t.Errorf("%s with Redis down: exit %d\nstdout %q\nstderr %q\nwant exit 1 saying unavailable, without the password", strings.Join(args, " "), code, out, errOut)
		}
	}
	if got := a.mustRun("suppress", "list"); got != "" {
		t.Errorf("local list after failed changes:\n%s", got)
	}
	if got := a.mustRun("limit", "global"); got != "global limit: off\n" {
		t.Errorf("local global limit after a failed change = %q", got)
	}
}

// TestSharedSettingsShown: under --limits, tier list and limit global show
// the settings every host shares, say which are this host's own, and what
// this database still has until a sender copies the shared ones.
func TestSharedSettingsShown(t *testing.T) {
	srv := redistest.Start(t)
	a := newSuppressCLI(t, nil)
	b := newSuppressCLI(t, nil)
	limits := "--limits=" + srv.URL()
	a.mustRun("tier", "set", "new", "--every", "10s", "--burst", "4", "--daily-cap", "80", limits)
	a.mustRun("limit", "global", "--rate", "2", "--burst", "10", limits)

	tests := []struct {
		name    string
		host    *suppressCLI
		args    []string
		want    []string // substrings of the tier new, tier warm and global lines
		columns int      // of each tier's line (piped: no header)
	}{
		{"B before a pull: the shared setting, and what B has", b, []string{limits}, []string{
			"new\t1 every 10 s\t4\t80\t", "\tyes; this database has 1 every 12 s burst 5 cap 50 until a sender copies it\n",
			"warm\t1 every 8 s\t8\t150\t1 every 8 s burst 8 cap 150\tno: this host's own\n",
			"global limit: rate 2/s, burst 10 (shared by every host); this database has off until a sender with --limits copies it\n",
		}, 6},
		{"A, which set them", a, []string{limits}, []string{
			"new\t1 every 10 s\t4\t80\t", "\tyes\n",
			"global limit: rate 2/s, burst 10, tokens now 10.0 (shared by every host)\n",
		}, 6},
		{"B without --limits: its own, as before", b, nil, []string{"new\t1 every 12 s\t5\t50\t", "global limit: off\n"}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tiers := tt.host.mustRun(append([]string{"tier", "list"}, tt.args...)...)
			global := tt.host.mustRun(append([]string{"limit", "global"}, tt.args...)...)
			all := tiers + global
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
			for _, l := range strings.Split(strings.TrimSpace(tiers), "\n") {
				if n := strings.Count(l, "\t") + 1; n != tt.columns {
					t.Errorf("%d columns, want %d: %q", n, tt.columns, l)
				}
			}
		})
	}

	var tiers []tierJSON
	if err := json.Unmarshal([]byte(b.mustRun("tier", "list", "--json", limits)), &tiers); err != nil {
		t.Fatal(err)
	}
	if n := tiers[0]; n.Name != "new" || n.Rate != 0.1 || n.Shared == nil || !*n.Shared || n.ThisDatabase == nil || n.ThisDatabase.Burst != 5 {
		t.Errorf("B's tier new in --json = %+v (this database %+v), want shared 1/10s with this database's burst 5 beside", n, n.ThisDatabase)
	}
	if w := tiers[1]; w.Shared == nil || *w.Shared || w.ThisDatabase != nil {
		t.Errorf("B's tier warm in --json = %+v, want not shared", w)
	}
	pullInto(t, b.db, srv.URL())
	if got := b.mustRun("limit", "global", limits); !strings.HasSuffix(got, "(shared by every host)\n") || strings.Contains(got, "this database has") {
		t.Errorf("B after a pull: limit global = %q, want the shared setting, no difference", got)
	}
}
