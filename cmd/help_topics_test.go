package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/whatsapp"
)

// TestHelpTopicsName: `wasend help exit-codes` lists every Exit constant
// of exit.go with its value, and `wasend help environment` names every
// environment variable the code reads (a literal passed to Getenv or
// LookupEnv, or any "WASEND_…" literal, such as a --token-env default).
func TestHelpTopicsName(t *testing.T) {
	c := newCLI(t)
	codes := c.ok("help", "exit-codes")
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "exit.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, "Exit") {
					continue
				}
				consts++
				v := vs.Values[i].(*ast.BasicLit).Value
				if !regexp.MustCompile(`(?m)^  ` + v + ` +\S`).MatchString(codes) {
					t.Errorf("help exit-codes has no line for %s (%s):\n%s", n.Name, v, codes)
				}
			}
		}
	}
	if consts != len(exitCodeHelp) || consts < 9 {
		t.Errorf("exit.go has %d exit codes, the help topic %d", consts, len(exitCodeHelp))
	}

	env := c.ok("help", "environment")
	read := envVarsRead(t, ".", filepath.Join("..", "internal"))
	if len(read) < 10 {
		t.Fatalf("found %d variables read: %v", len(read), read)
	}
	for _, v := range read {
		if !regexp.MustCompile(`(?m)^  ` + v + `$`).MatchString(env) {
			t.Errorf("help environment does not name %s, which the code reads", v)
		}
	}
	if !strings.Contains(env, "(default "+whatsapp.DefaultVersion+")") {
		t.Errorf("help environment does not give WASEND_API_VERSION's default %s", whatsapp.DefaultVersion)
	}
	for _, topic := range []string{"exit-codes", "environment"} {
		if out := c.ok("help"); !strings.Contains(out, "wasend "+topic) {
			t.Errorf("help does not list the topic %s:\n%s", topic, out)
		}
	}
}

// envVarsRead lists the environment variables the product code under dirs
// reads. Test files and internal/testproc, a test harness, are not product
// code.
func envVarsRead(t *testing.T, dirs ...string) []string {
	t.Helper()
	wasend := regexp.MustCompile(`^WASEND_[A-Z0-9_]+$`)
	seen := map[string]bool{}
	var names []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			names = append(names, s)
		}
	}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "testproc") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok || sel.Sel.Name != "Getenv" && sel.Sel.Name != "LookupEnv" || len(n.Args) != 1 {
						return true
					}
					if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						add(s)
					}
				case *ast.BasicLit:
					if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && wasend.MatchString(s) {
						add(s)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return names
}
