package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// campaign import stores the campaign without any account, reports what it
// skipped, and is found again — by itself and by campaign run.
func TestCampaignImport(t *testing.T) {
	c := newCLI(t)
	c.ok("suppress", "add", "+4915123456790", "--reason", "asked to stop")
	list := filepath.Join(t.TempDir(), "list.csv")
	body := "Phone;Name\n" +
		"+49 151 23456789;Ana\n" + // line 2
		"0151 23456790;Ben\n" + // line 3: suppressed once normalised with DE
		"12ab;Cy\n" + // line 4
		"+49 151 2345-6789;Dee\n" + // line 5: duplicate of line 2
		"+49 151 23456791;Eve\n" // line 6
	if err := os.WriteFile(list, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--template", "t", "--lang", "en", "--params", "name", "--region", "DE"}
	stdout, stderr, err := c.run(append([]string{"campaign", "import", list}, flags...)...)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, stderr)
	}
	out := stdout + stderr
	for _, want := range []string{
		`campaign 1 "list.csv": 2 recipients, skipped 3`,
		`line 3: "0151 23456790": suppressed: asked to stop`,
		`line 4: "12ab": column Phone: not a number`,
		`line 5: "+49 151 2345-6789": duplicate of line 2 (+4915123456789)`,
		"wasend campaign run --resume 1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	if out := c.ok(append([]string{"campaign", "import", list}, flags...)...); !strings.Contains(out, "campaign 1 \"list.csv\": already imported") {
		t.Errorf("second import:\n%s", out)
	}
	if out := c.ok("campaign", "skipped", "1"); !strings.Contains(out, "duplicate of line 2") {
		t.Errorf("campaign skipped 1:\n%s", out)
	}
}
