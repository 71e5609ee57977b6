package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/golden"
	"github.com/wasend/wasend/internal/runner"
)

const corpusDir = "../../testdata/csv"

// corpusCase is one fixture read the way `wasend campaign check FILE [flags]`
// would read it.
type corpusCase struct {
	file    string
	variant string // "" for the main reading; else a second golden, FILE.VARIANT.golden
	spec    campaign.Spec
	read    runner.ReadOptions
}

func params(p ...string) campaign.Spec {
	return campaign.Spec{Kind: campaign.KindTemplate, Template: "t", Lang: "en_US", Params: p}
}

func text(t string) campaign.Spec {
	return campaign.Spec{Kind: campaign.KindText, Text: t}
}

// corpus lists every file of testdata/csv with the options it is checked
// with; TestCorpus fails for a file missing here, so a new fixture comes with
// its golden summary.
var corpus = []corpusCase{
	{file: "bad_phones.csv", spec: params("name")},
	{file: "bad_quote.csv", spec: params("name")},
	{file: "blank_lines.csv", spec: params("name")},
	{file: "bom_crlf.csv", spec: text("Hi {{ NAME }}, your code is {{code}}.")},
	{file: "bom_only.csv", spec: params()},
	{file: "cp1252_late.csv", spec: params("name")},
	{file: "cr_only.csv", spec: params("name")},
	{file: "cr_only.csv", variant: "phone-only", spec: params()},
	// A CRM export with a landline Phone and a Mobile Phone: read from
	// the mobile one, or from Phone when named.
	{file: "crm_export.csv", spec: params("First Name"), read: runner.ReadOptions{Region: "US"}},
	{file: "crm_export.csv", variant: "phone-column", spec: params("First Name"), read: runner.ReadOptions{Region: "US", PhoneColumn: "Phone"}},
	{file: "duplicate_header.csv", spec: params("name")},
	// People known by business-scoped user ids (issue 27): alone, beside
	// a phone, in the phone column, and a column named with --user-id-column.
	{file: "user_ids.csv", spec: params("name")},
	{file: "user_ids_only.csv", spec: params("name")},
	{file: "user_ids_named.csv", spec: params("name"), read: runner.ReadOptions{UserIDColumn: "Customer Key"}},
	{file: "duplicates.csv", spec: params("name")},
	{file: "empty.csv", spec: params()},
	{file: "excel_export.csv", spec: params("vorname", "code"), read: runner.ReadOptions{Region: "DE"}},
	{file: "excel_export.csv", variant: "text", spec: text("Hallo {{Vorname}}: {{Notiz}}"), read: runner.ReadOptions{Region: "DE"}},
	{file: "german_export.csv", spec: params("Vorname"), read: runner.ReadOptions{Region: "DE"}},
	{file: "header_only.csv", spec: params("name")},
	{file: "header_spaces.csv", spec: params("first name", "code")},
	{file: "huge_field.csv", spec: params("name")},
	{file: "latin1.csv", spec: params("name")},
	{file: "missing_param.csv", spec: params("name", "code")},
	{file: "mixed_formats.csv", spec: params("name")},
	{file: "mobile_header.csv", spec: params("name", "code")},
	{file: "msisdn_header.csv", spec: params("First Name")},
	{file: "national_region.csv", spec: params("name"), read: runner.ReadOptions{Region: "GB"}},
	{file: "national_region.csv", variant: "no-region", spec: params("name")},
	{file: "no_phone_column.csv", spec: params("name")},
	{file: "number_header.csv", spec: params("Name", "Code"), read: runner.ReadOptions{Region: "IN"}},
	{file: "params_missing_column.csv", spec: params("name", "code")},
	{file: "phone_and_number.csv", spec: params("name")},
	{file: "phone_column_option.csv", spec: params("name"), read: runner.ReadOptions{Region: "DE", PhoneColumn: "handynummer"}},
	{file: "pipe_delimiter.csv", spec: params("name", "note"), read: runner.ReadOptions{Delimiter: '|'}},
	{file: "quoted_newline.csv", spec: params("name", "note")},
	{file: "quoted_newline.csv", variant: "text", spec: text("{{note}}")},
	{file: "ragged.csv", spec: params("name", "code")},
	{file: "semicolon.csv", spec: params("name", "amount"), read: runner.ReadOptions{Region: "DE"}},
	{file: "semicolon.csv", variant: "comma", spec: params("name"), read: runner.ReadOptions{Region: "DE", Delimiter: ','}},
	{file: "space_before_quote.csv", spec: params("name")},
	{file: "tab.tsv", spec: params("name", "code")},
	{file: "template_shape.csv", spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "t", Lang: "en_US",
		Params: []string{"name", "code"}, Header: &campaign.Header{Type: campaign.HeaderImage, Column: "banner"},
		Buttons: []campaign.Button{{Index: 0, Column: "order"}}}},
	{file: "trailing_delimiters.csv", spec: params("name", "code")},
	{file: "unterminated_quote.csv", spec: params("name")},
	{file: "uppercase.csv", spec: params("name", "code")},
	{file: "utf16.csv", spec: params("name")},
	{file: "wa_id_header.csv", spec: params("profile_name")},
}

func TestCorpus(t *testing.T) {
	ents, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			files = append(files, e.Name())
		}
	}
	if len(files) < 24 {
		t.Errorf("testdata/csv has %d files, want at least 24", len(files))
	}
	for _, f := range files {
		if !slices.ContainsFunc(corpus, func(c corpusCase) bool { return c.file == f }) {
			t.Errorf("testdata/csv/%s is not in the corpus table: add it, with the options to read it, and run with -update", f)
		}
	}

	goldens := map[string]bool{}
	for _, c := range corpus {
		name := c.file
		if c.variant != "" {
			name += "." + c.variant
		}
		goldenPath := filepath.Join(corpusDir, "golden", name+".golden")
		goldens[filepath.Base(goldenPath)] = true
		t.Run(name, func(t *testing.T) {
			golden.Check(t, goldenPath, checkFile(t, c))
		})
	}

	// A golden left behind by a renamed or removed case would go stale unseen.
	stale, _ := filepath.Glob(filepath.Join(corpusDir, "golden", "*.golden"))
	for _, g := range stale {
		if !goldens[filepath.Base(g)] {
			t.Errorf("%s belongs to no corpus case", g)
		}
	}
}

// checkFile runs runner.Check on c's file and renders what it found.
func checkFile(t *testing.T, c corpusCase) string {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, c.file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "file: %s\n", c.file)
	fmt.Fprintf(&b, "options: %s\n", describe(c))
	s, err := runner.Check(context.Background(), f, c.file, c.spec, c.read, nil)
	if err != nil {
		fmt.Fprintf(&b, "error: %s\n", oneLine(err.Error()))
		return b.String()
	}
	fmt.Fprintf(&b, "phone column: %s\n", s.Phone)
	fmt.Fprintf(&b, "rows: %d\nvalid: %d\nduplicates: %d\nsuppressed: %d\n", s.Rows, s.Valid, s.Duplicates, s.Suppressed)
	b.WriteString("invalid:\n")
	for _, r := range s.Invalid {
		fmt.Fprintf(&b, "  %d  %s\n", r.Rows, oneLine(r.Reason))
	}
	b.WriteString("skipped:\n")
	for _, k := range s.Skipped {
		fmt.Fprintf(&b, "  line %d  %s  %s\n", k.Line, clip(fmt.Sprintf("%q", k.Input)), oneLine(k.Reason))
	}
	return b.String()
}

// describe says how a case is read, in `wasend campaign check` flags.
func describe(c corpusCase) string {
	var o []string
	if len(c.spec.Params) > 0 {
		o = append(o, "--params "+strings.Join(c.spec.Params, ","))
	}
	if c.spec.Text != "" {
		o = append(o, fmt.Sprintf("--text %q", c.spec.Text))
	}
	if h := c.spec.Header; h != nil {
		o = append(o, fmt.Sprintf("--header-%s %s", h.Type, h.Column))
	}
	for _, btn := range c.spec.Buttons {
		o = append(o, fmt.Sprintf("--button-param %d=%s", btn.Index, btn.Column))
	}
	if c.read.Region != "" {
		o = append(o, "--region "+c.read.Region)
	}
	if c.read.Delimiter != 0 {
		o = append(o, fmt.Sprintf("--delimiter %q", c.read.Delimiter))
	}
	if c.read.PhoneColumn != "" {
		o = append(o, "--phone-column "+c.read.PhoneColumn)
	}
	if len(o) == 0 {
		return "(none)"
	}
	return strings.Join(o, " ")
}

// oneLine keeps a message that quotes the file (a header with line breaks,
// say) on one golden line.
func oneLine(s string) string { return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s) }

// clip keeps goldens readable when an input is a huge field.
func clip(s string) string {
	const limit = 120
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}
