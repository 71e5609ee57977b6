//go:build torture

package torture

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/pgtest"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

var (
	fullFlag = flag.Bool("torture.full", os.Getenv("WASEND_TORTURE_FULL") != "",
		"run every scenario at full size (default: the short CI size; also $WASEND_TORTURE_FULL)")
	seedFlag = flag.Uint64("torture.seed", 0, "seed of kill moments and sandbox faults (0: from the clock)")
)

// TestMain builds the wasend binary once, without -race: the suite
// measures wasend, not the race detector. It stops the postgres of the
// Postgres scenarios, if one started.
func TestMain(m *testing.M) {
	flag.Parse()
	code := testproc.Main(m)
	pgtest.Stop()
	os.Exit(code)
}

// size picks the short or the full figure of a scenario.
func size[T any](short, full T) T {
	if *fullFlag {
		return full
	}
	return short
}

// testSeed returns the seed of a scenario, logged so a failure can be
// replayed with -torture.seed.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano() % (1 << 40))
	}
	t.Logf("seed %d (replay with -args -torture.seed=%d%s)", seed, seed, size("", " -torture.full"))
	return seed
}

// tokenEnv names the variable the test accounts read their token from.
const tokenEnv = "WASEND_TORTURE_TOKEN"

// The harness's types under the names the scenarios use.
type (
	record = sandbox.Record
	row    = testproc.Row
	result = testproc.Result
)

// world is one scenario's surroundings: a directory, a database file, and
// a sandbox process that every wasend process sends to.
type world struct {
	*testproc.World
	api *testproc.Sandbox
}

func newWorld(t *testing.T, sandboxArgs ...string) *world {
	t.Helper()
	w := &world{World: testproc.New(t, testproc.Options{
		TokenEnv: tokenEnv,
		Timeout:  size(90*time.Second, 10*time.Minute),
		Poll:     50 * time.Millisecond,
	})}
	w.api = testproc.StartSandbox(t, w.Dir, sandboxArgs...)
	w.APIBase = w.api.URL
	return w
}

// acceptedBy counts accepted messages per phone number id among recs.
func acceptedBy(recs []record) map[string]int {
	n := map[string]int{}
	for _, r := range recs {
		if testproc.AcceptedOutcome(r.Outcome) {
			n[r.PhoneNumberID]++
		}
	}
	return n
}

// account is a sending number.
type account struct {
	name, phoneNumberID string
}

// threeAccounts are the sending numbers of most scenarios, one per tier.
var threeAccounts = []account{
	{"fresh", "100000000000001"},
	{"warming", "100000000000002"},
	{"main", "100000000000003"},
}

// setup sets every tier to rate/burst/cap and adds the accounts, one per
// tier in turn.
func (w *world) setup(rate float64, burst, dailyCap int, accts []account) {
	w.T.Helper()
	tiers := []string{"new", "warm", "active"}
	for _, tier := range tiers {
		w.OK("tier", "set", tier, "--rate", fmt.Sprint(rate), "--burst", fmt.Sprint(burst), "--daily-cap", fmt.Sprint(dailyCap))
	}
	for i, a := range accts {
		w.OK("account", "add", a.name, "--phone-number-id", a.phoneNumberID, "--tier", tiers[i%len(tiers)], "--token-env", tokenEnv)
	}
}

// fastFailure keeps the failure model's waits short.
var fastFailure = []string{"--cooldown", "100ms", "--backoff-base", "20ms", "--backoff-max", "200ms"}

// runArgs is `campaign run CSV` with the demo template and extra flags.
// Not -q: it drops warnings, and checkOutput reads them too.
func runArgs(csv string, extra ...string) []string {
	args := []string{"campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name"}
	args = append(args, fastFailure...)
	return append(args, extra...)
}

// checkOutput fails for what must never reach a user: a locked database,
// a panic.
func checkOutput(t *testing.T, what string, r result) {
	t.Helper()
	for _, bad := range []string{"database is locked", "panic:", "goroutine ", "SQLITE_BUSY"} {
		if strings.Contains(r.Stderr, bad) || strings.Contains(r.Stdout, bad) {
			t.Errorf("%s: output contains %q\n%s", what, bad, r)
		}
	}
}
