// Package docscheck holds tests that keep the manual honest: every relative
// link in README.md and docs/*.md reaches a file and, with a #fragment, a
// heading of it; every Go comment that cites a page of docs/ cites one that
// exists; the README stays a front door.
package docscheck

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// maxReadmeLines is issue 24's floor: the README is a front door and the
// manual lives in docs/.
const maxReadmeLines = 250

// root is the repository root, two levels above this package.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatalf("repository root not found from %s: %v", r, err)
	}
	return r
}

// pages are README.md and every page of docs/, relative to the root.
func pages(t *testing.T, r string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(r, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, d := range docs {
		rel, _ := filepath.Rel(r, d)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

var (
	fence      = regexp.MustCompile("(?s)(^|\n)(```|~~~).*?\n(```|~~~)[^\n]*")
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refDef     = regexp.MustCompile(`(?m)^\s{0,3}\[[^\]]+\]:\s*(\S+)(?:\s+"[^"]*")?\s*$`)
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// stripCode blanks fenced blocks and code spans, where brackets are not links.
func stripCode(s string) string {
	s = fence.ReplaceAllStringFunc(s, func(m string) string {
		return strings.Repeat("\n", strings.Count(m, "\n"))
	})
	return codeSpan.ReplaceAllString(s, "``")
}

// links returns the link targets of a Markdown text.
func links(text string) []string {
	text = stripCode(text)
	var out []string
	for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	for _, m := range refDef.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// slug is the anchor GitHub gives a heading: lower case, punctuation other
// than '-' and '_' dropped, spaces turned into '-'.
func slug(h string) string {
	h = strings.ToLower(strings.ReplaceAll(h, "`", ""))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the heading anchors of a Markdown file, with GitHub's
// -1, -2 suffixes for repeated headings.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := stripCodeBlocksOnly(string(data))
	seen := map[string]int{}
	out := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		m := heading.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		a := slug(m[1])
		if n := seen[a]; n > 0 {
			out[a+"-"+itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func stripCodeBlocksOnly(s string) string {
	return fence.ReplaceAllStringFunc(s, func(m string) string {
		return strings.Repeat("\n", strings.Count(m, "\n"))
	})
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// checkTarget reports what is wrong with target, a link written in the file
// at from (relative to r); "" when it resolves.
func checkTarget(t *testing.T, r, from, target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	path, frag, _ := strings.Cut(target, "#")
	file := filepath.Join(r, filepath.FromSlash(from))
	if path != "" {
		file = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
	}
	if _, err := os.Stat(file); err != nil {
		return "no such file"
	}
	if frag == "" {
		return ""
	}
	if !strings.HasSuffix(file, ".md") {
		return "a #fragment on a file that is not Markdown"
	}
	if !anchors(t, file)[frag] {
		return "no heading with anchor #" + frag
	}
	return ""
}

func TestManualLinksResolve(t *testing.T) {
	r := root(t)
	for _, p := range pages(t, r) {
		data, err := os.ReadFile(filepath.Join(r, p))
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range links(string(data)) {
			if why := checkTarget(t, r, p, target); why != "" {
				t.Errorf("%s: link %q: %s", p, target, why)
			}
		}
	}
}

func TestManualPages(t *testing.T) {
	r := root(t)
	data, err := os.ReadFile(filepath.Join(r, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail into docs/", n, maxReadmeLines)
	}
	// Every page of the manual is reachable from the front door.
	linked := map[string]bool{}
	for _, target := range links(string(data)) {
		path, _, _ := strings.Cut(target, "#")
		linked[path] = true
	}
	for _, p := range pages(t, r)[1:] {
		if !linked[p] {
			t.Errorf("README.md links no %s: every page of the manual is listed there", p)
		}
	}
}

var (
	// docCite is a page of docs/ named in a Go comment, with its anchor
	// and any further ", #anchor" of the same page.
	docCite = regexp.MustCompile(`docs/([A-Za-z0-9_-]+\.md)((?:#[A-Za-z0-9_-]+)?(?:,\s*#[A-Za-z0-9_-]+)*)`)
	// sectionCite is a numbered section of a Markdown document ("§4.1"),
	// which no page of docs/ has.
	sectionCite = regexp.MustCompile(`[A-Za-z0-9_-]+\.md\s*§`)
)

func TestGoCommentsCiteExistingDocs(t *testing.T) {
	r := root(t)
	err := filepath.WalkDir(r, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != r && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(r, path)
		if rel == filepath.Join("internal", "docscheck", "docs_test.go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			_, comment, ok := strings.Cut(sc.Text(), "//")
			if !ok {
				continue
			}
			if sectionCite.MatchString(comment) {
				t.Errorf("%s:%d cites a numbered section no page of docs/ has: %s", rel, line, strings.TrimSpace(comment))
			}
			for _, m := range docCite.FindAllStringSubmatch(comment, -1) {
				page := "docs/" + m[1]
				frags := strings.FieldsFunc(m[2], func(r rune) bool { return r == '#' || r == ',' || r == ' ' })
				if len(frags) == 0 {
					frags = []string{""}
				}
				for _, frag := range frags {
					target := page
					if frag != "" {
						target += "#" + frag
					}
					if why := checkTarget(t, r, "README.md", target); why != "" {
						t.Errorf("%s:%d cites %s: %s", rel, line, target, why)
					}
				}
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}
