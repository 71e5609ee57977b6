// Package archcheck holds tests that read the source tree and fail when a
// rule between packages breaks (docs/architecture.md names the rules).
package archcheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/wasend/wasend"

// imports maps each package directory of the repository (relative, slash
// separated: "cmd", "internal/store") to what its non-test files import.
func imports(t *testing.T) map[string]map[string]bool {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if out[pkg] == nil {
			out[pkg] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[pkg][strings.TrimPrefix(p, module+"/")] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rule forbids packages matching from (a prefix: "internal/limits" covers
// its subpackages) to import anything matching one of to.
type rule struct {
	why  string
	from []string
	to   []string
	// except lists what `from` may still import although the rule forbids
	// it: known debt, each to go (issue 24). An exception that no longer
	// occurs fails the test, so the list only shrinks.
	except []string
}

func under(pkg, prefix string) bool {
	return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
}

func matchesAny(pkg string, prefixes []string) bool {
	for _, p := range prefixes {
		if under(pkg, p) {
			return true
		}
	}
	return false
}

var sqlDrivers = []string{"database/sql", "github.com/mattn/go-sqlite3", "github.com/jackc/pgx"}

// drivers are the SQL drivers proper, without database/sql.
var drivers = sqlDrivers[1:]

var rules = []rule{
	{
		why:  "the domain package and the clock depend on the standard library only",
		from: []string{"internal/campaign", "internal/clock"},
		to:   []string{"internal", "cmd", "github.com"},
	},
	{
		why:  "the engine sees storage only through dispatch.Ledger and limits only through its gate interface",
		from: []string{"internal/dispatch"},
		to:   append([]string{"internal/store", "internal/limits", "internal/claim"}, sqlDrivers...),
	},
	{
		// internal/store/driver is the contract both stores implement and
		// their consumers use (River's riverdriver): it names no store, so
		// a consumer that needs only the seam imports neither driver.
		why:  "the store's seam imports no driver: the drivers import it",
		from: []string{"internal/store/driver"},
		to:   append([]string{"internal/store"}, drivers...),
	},
	{
		// The claim decides which rows go and from which number; the store
		// executes it through driver.ClaimTx (the River pattern: the driver
		// executes, the logic sits above it). storetest gets the claim
		// from its harness, as it gets the webhook drain.
		why:  "the claim runs above the store: the store never imports it",
		from: []string{"internal/store"},
		to:   []string{"internal/claim"},
	},
	{
		// cmd reaches the limits shared between hosts, and the record of the
		// suppression list and settings under --limits, through
		// internal/hostshare only.
		why:  "commands reach Redis and SQL only through the packages that own them",
		from: []string{"cmd"},
		to:   append([]string{"internal/limits", "github.com/redis/go-redis"}, sqlDrivers...),
	},
	{
		// hostshare copies the shared list and settings into a host's
		// database and dials the gates for the commands: it sits above both.
		why:  "the store and the Redis gate never import the host-sharing package that uses them",
		from: []string{"internal/store", "internal/limits"},
		to:   []string{"internal/hostshare"},
	},
	{
		why:  "only the store speaks SQLite",
		from: []string{"", "cmd", "internal", "bench"},
		to:   drivers,
		// internal/store covers storetest, which puts a test's database in
		// states wasend never writes; testproc is a test harness that reads
		// a database directly to judge what a process wrote; pgtest starts
		// the tests' postgres.
		except: []string{"internal/store", "internal/testproc", "internal/pgtest"},
	},
	{
		// pgtest starts the tests' postgres and makes their databases;
		// only tests import it.
		why:    "pgx only in the store's Postgres driver",
		from:   []string{"", "cmd", "internal", "bench"},
		to:     []string{"github.com/jackc/pgx"},
		except: []string{"internal/store/pgstore", "internal/pgtest"},
	},
	{
		why:  "only the store and the read models speak SQL",
		from: []string{"", "cmd", "internal", "bench"},
		to:   []string{"database/sql"},
		// readmodel runs its read-only queries on the handle the store
		// gives it (Store.Reader): the figures status, show and export
		// print are queries, not store methods (issue 24).
		except: []string{"internal/store", "internal/readmodel", "internal/testproc"},
	},
	{
		// The copy of the shared list and settings into a host's database
		// (once limits/hostsync, the only exception) is internal/hostshare,
		// above both.
		why:  "limits are below the store: the store may call the decider, never the reverse",
		from: []string{"internal/limits"},
		to:   []string{"internal/store"},
	},
	{
		// The webhook package decides what a status means (webhook.Rules)
		// and the store carries it out through driver.InboxTx: one
		// direction, so the decision cannot drift back into SQL.
		why:  "the store makes the webhook moves it is told; it never imports the webhook package",
		from: []string{"internal/store"},
		to:   []string{"internal/webhook"},
	},
	{
		// Thin commands (issue 24): a command parses its flags, calls one
		// use case in runner, report or webhook, and prints; the engine,
		// the Cloud API client, metrics, recipient files and the screens
		// are reached through those.
		why:  "commands call use cases; the engine, the Cloud API, metrics and recipient files sit behind runner and report",
		from: []string{"cmd"},
		to: []string{"internal/dispatch", "internal/whatsapp", "internal/metrics", "internal/recipients", "internal/screen",
			"internal/numberset", "internal/planner"},
	},
	{
		why:  "nothing imports the command tree but main",
		from: []string{"internal", "bench"},
		to:   []string{"cmd"},
	},
}

func TestImportRules(t *testing.T) {
	graph := imports(t)
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, r := range rules {
		used := map[string]bool{}
		for _, pkg := range pkgs {
			if !fromMatches(pkg, r.from) {
				continue
			}
			for imp := range graph[pkg] {
				if !matchesAny(imp, r.to) || under(imp, pkg) {
					continue
				}
				if exc, ok := excepted(pkg, imp, r.except); ok {
					used[exc] = true
					continue
				}
				t.Errorf("%s imports %s: %s", pkg, imp, r.why)
			}
		}
		for _, e := range r.except {
			if !used[e] {
				t.Errorf("rule %q: exception %s no longer occurs; delete it", r.why, e)
			}
		}
	}
}

// The two drivers stand side by side behind internal/store/driver: what
// both need (the savepoint of a webhook part, the deferred statuses'
// query, the SQL written once) lives in a package beside them, so neither
// imports the other. The rules above match subpackages too; these pairs
// name one package each.
func TestDriversStandApart(t *testing.T) {
	graph := imports(t)
	for _, pair := range [][2]string{{"internal/store/pgstore", "internal/store"}, {"internal/store", "internal/store/pgstore"}} {
		if len(graph[pair[0]]) == 0 {
			t.Fatalf("no imports read for %s", pair[0])
		}
		if graph[pair[0]][pair[1]] {
			t.Errorf("%s imports %s: what both drivers need belongs in a package beside them (internal/store/driver, inboxsql, claimsql...)",
				pair[0], pair[1])
		}
	}
}

// fromMatches treats "" as the root package (main) alone.
func fromMatches(pkg string, from []string) bool {
	for _, f := range from {
		if f == "" && pkg == "." || f != "" && under(pkg, f) {
			return true
		}
	}
	return false
}

// excepted reports which exception, if any, allows pkg to import imp: an
// exception names either the importing package or the imported one.
func excepted(pkg, imp string, except []string) (string, bool) {
	for _, e := range except {
		if under(pkg, e) || under(imp, e) {
			return e, true
		}
	}
	return "", false
}

// cmdImportCeiling is how many of the project's packages cmd may import
// (issue 24's floor): a command that needs another one wants a use case
// in a package it already imports.
const cmdImportCeiling = 12

func TestCmdImportsFewPackages(t *testing.T) {
	var own []string
	for imp := range imports(t)["cmd"] {
		if under(imp, "internal") {
			own = append(own, imp)
		}
	}
	sort.Strings(own)
	if len(own) > cmdImportCeiling {
		t.Errorf("cmd imports %d of the project's packages, at most %d: %s", len(own), cmdImportCeiling, strings.Join(own, ", "))
	}
}

// The walk must see the tree: a rule over nothing passes vacuously.
func TestImportGraphIsRead(t *testing.T) {
	graph := imports(t)
	for _, want := range []string{".", "cmd", "internal/store", "internal/dispatch", "internal/campaign"} {
		if len(graph[want]) == 0 {
			t.Errorf("no imports read for %s", want)
		}
	}
	if _, err := os.Stat("../../go.mod"); err != nil {
		t.Fatal(err)
	}
}
