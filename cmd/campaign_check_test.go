package cmd

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCampaignCheck(t *testing.T) {
	c := newCLI(t)
	c.ok("suppress", "add", "+4915123456790", "--reason", "asked to stop")
	dir := t.TempDir()
	list := filepath.Join(dir, "list.csv")
	body := "Phone;Name\n" +
		"+49 151 23456789;Ana\n" + // line 2
		"0151 23456790;Ben\n" + // line 3: suppressed once normalised with DE
		"12ab;Cy\n" + // line 4
		"+49 151 2345-6789;Dee\n" + // line 5: duplicate of line 2
		"+49 151 23456791;\n" // line 6: missing parameter
	if err := os.WriteFile(list, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "skipped.csv")
	out := c.ok("campaign", "check", list, "--template", "t", "--lang", "en", "--params", "name",
		"--region", "DE", "--report", report)
	for _, want := range []string{
		"5 rows read, 1 valid, 2 invalid, 1 duplicates, 1 suppressed",
		`line 3: "0151 23456790": suppressed: asked to stop`,
		`line 4: "12ab": column Phone: not a number`,
		`line 5: "+49 151 2345-6789": duplicate of line 2 (+4915123456789)`,
		"line 6:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}

	f, err := os.Open(report)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || strings.Join(recs[0], ",") != "line,input,reason" || recs[1][0] != "3" || recs[4][0] != "6" {
		t.Errorf("report %q: want a header and the 4 skipped lines 3-6", recs)
	}

	var js checkJSON
	if err := json.Unmarshal([]byte(c.ok("campaign", "check", list, "--template", "t", "--lang", "en",
		"--params", "name", "--region", "DE", "--json")), &js); err != nil {
		t.Fatal(err)
	}
	if js.Rows != 5 || js.Valid != 1 || js.Duplicates != 1 || js.Suppressed != 1 || len(js.Problems) != 4 {
		t.Errorf("check --json %+v", js)
	}

	// Nothing was stored: no campaign exists.
	if st := c.status(); len(st.Campaigns) != 0 {
		t.Errorf("check stored %d campaign(s)", len(st.Campaigns))
	}
}

func TestCampaignCheckFileErrors(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
	dir := t.TempDir()
	noPhone := filepath.Join(dir, "nophone.csv")
	if err := os.WriteFile(noPhone, []byte("name,code\nAna,1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.run("campaign", "check", noPhone, "--template", "t", "--lang", "en")
	if err == nil || !strings.Contains(err.Error(), "nophone.csv:1") || !strings.Contains(err.Error(), "no phone column") {
		t.Errorf("error %v: want file:line and 'no phone column'", err)
	}
	c.usage("campaign", "check", noPhone, "--template", "t", "--lang", "en", "--delimiter", "|")
}

// TestSkipContactedWithin: a number another campaign sent to within the
// window is skipped, at check and at import; one never sent to is not.
func TestSkipContactedWithin(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db) // sends +4915100000000 at 14:01
	c.now = showT0.Add(time.Hour)
	list := filepath.Join(t.TempDir(), "again.csv")
	if err := os.WriteFile(list, []byte("phone\n+4915100000000\n+4915100000010\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := c.ok("campaign", "check", list, "--template", "t", "--lang", "en", "--skip-contacted-within", "72h")
	if !strings.Contains(out, "2 rows read, 1 valid") || !strings.Contains(out, `line 2: "+4915100000000": contacted within 72h0m0s (campaign 1,`) {
		t.Errorf("check --skip-contacted-within:\n%s", out)
	}
	out = c.ok("campaign", "check", list, "--template", "t", "--lang", "en", "--skip-contacted-within", "30m")
	if !strings.Contains(out, "2 rows read, 2 valid") {
		t.Errorf("a send an hour ago is outside a 30m window:\n%s", out)
	}
	// plan screens as check does (it used to accept the flag and ignore it).
	if out := c.ok("campaign", "plan", list, "--template", "t", "--lang", "en", "--skip-contacted-within", "72h"); !strings.Contains(out, "kind=recipients count=1 skipped=1") {
		t.Errorf("plan --skip-contacted-within:\n%s", out)
	}
	c.ok("campaign", "import", list, "--template", "t", "--lang", "en", "--skip-contacted-within", "72h")
	st := c.status()
	if len(st.Campaigns) != 2 || st.Campaigns[1].Total != 1 || st.Campaigns[1].Skipped != 1 {
		t.Errorf("import with --skip-contacted-within: %+v, want 1 recipient and 1 skipped", st.Campaigns)
	}
}

// TestSameTemplateWithin24h: by default a number that got the same
// template from any campaign in the last 24 h is skipped, at check, plan
// and import, with one reason text; another template, --again, or a send
// over 24 h ago lets it through.
func TestSameTemplateWithin24h(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db) // sends spring_sale to +4915100000000 at 14:01
	c.now = showT0.Add(time.Hour)
	list := filepath.Join(t.TempDir(), "again.csv")
	if err := os.WriteFile(list, []byte("phone,name,code\n+4915100000000,A,1\n+4915100000010,B,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The same template with other parameters: another message, so not
	// campaign 1 (unfinished, which this list would continue).
	msg := []string{"--template", "spring_sale", "--lang", "en_US", "--params", "name"}
	check := func(extra ...string) string {
		return c.ok(append(append([]string{"campaign", "check", list}, msg...), extra...)...)
	}
	if out := check(); !strings.Contains(out, "2 rows read, 1 valid, 0 invalid, 0 duplicates, 0 suppressed, 1 contacted recently") ||
		!strings.Contains(out, `line 2: "+4915100000000": sent template spring_sale within 24h0m0s (campaign 1, `) {
		t.Errorf("check of the same template an hour later:\n%s", out)
	}
	if out := check("--again"); !strings.Contains(out, "2 rows read, 2 valid") {
		t.Errorf("check --again:\n%s", out)
	}
	if out := c.ok("campaign", "check", list, "--template", "autumn_sale", "--lang", "en_US", "--params", "name,code"); !strings.Contains(out, "2 valid") {
		t.Errorf("another template:\n%s", out)
	}
	if out := c.ok(append([]string{"campaign", "plan", list}, msg...)...); !strings.Contains(out, "kind=recipients count=1 skipped=1") {
		t.Errorf("plan:\n%s", out)
	}
	c.now = showT0.Add(25 * time.Hour)
	if out := check(); !strings.Contains(out, "2 rows read, 2 valid") {
		t.Errorf("check 25 h later:\n%s", out)
	}
	c.now = showT0.Add(time.Hour)
	c.ok(append([]string{"campaign", "import", list}, msg...)...)
	if st := c.status(); len(st.Campaigns) != 2 || st.Campaigns[1].Total != 1 || st.Campaigns[1].Skipped != 1 {
		t.Errorf("import: %+v, want 1 recipient and 1 skipped", st.Campaigns)
	}
}
