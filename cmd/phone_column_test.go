package cmd

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The recipient fixtures of testdata/csv whose header has more than one
// phone-like column: a CRM export with a landline Phone and a Mobile Phone
// (one row has no mobile), and a German one with Telefonnummer and
// Mobilnummer.
var (
	crmExport    = filepath.Join("..", "testdata", "csv", "crm_export.csv")
	germanExport = filepath.Join("..", "testdata", "csv", "german_export.csv")
)

// TestPhoneColumnCheck: check says which column it read the numbers from
// and which phone-like ones it did not, in text and --json.
// Rewrite with: go test ./cmd -run TestPhoneColumnCheck -update
func TestPhoneColumnCheck(t *testing.T) {
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"campaign_check_crm.golden", []string{crmExport, "--params", "First Name", "--region", "US"}},
		{"campaign_check_crm_phone_column.golden", []string{crmExport, "--params", "First Name", "--region", "US", "--phone-column", "phone"}},
		{"campaign_check_crm_json.golden", []string{crmExport, "--params", "First Name", "--region", "US", "--json"}},
		{"campaign_check_german.golden", []string{germanExport, "--params", "Vorname", "--region", "DE"}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			c := newCLI(t)
			c.emptyDB()
			out := c.ok(append([]string{"campaign", "check", "--template", "t", "--lang", "en"}, tt.args...)...)
			goldenFile(t, tt.golden, out)
		})
	}

	c := newCLI(t)
	c.emptyDB()
	var js checkJSON
	if err := json.Unmarshal([]byte(c.ok("campaign", "check", germanExport, "--text", "Hallo {{Vorname}}", "--ignore-window", "--region", "DE", "--json")), &js); err != nil {
		t.Fatal(err)
	}
	if js.PhoneColumn != "Mobilnummer" || !slices.Equal(js.PhoneUnused, []string{"Telefonnummer"}) || js.Valid != 2 {
		t.Errorf("check --json: phone column %q, unused %q, %d valid; want Mobilnummer, [Telefonnummer], 2", js.PhoneColumn, js.PhoneUnused, js.Valid)
	}
}

// TestPhoneColumnPlan: plan names the column after the recipients, and in
// --json.
// Rewrite with: go test ./cmd -run TestPhoneColumnPlan -update
func TestPhoneColumnPlan(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	args := []string{"campaign", "plan", crmExport, "--template", "t", "--lang", "en_US", "--params", "First Name",
		"--region", "US", "--start", "2026-11-30T23:50:00Z"}
	goldenFile(t, "campaign_plan_crm_piped.golden", c.ok(args...))

	var js struct {
		Recipients  int      `json:"recipients"`
		PhoneColumn string   `json:"phone_column"`
		PhoneUnused []string `json:"phone_columns_unused"`
	}
	if err := json.Unmarshal([]byte(c.ok(append(args, "--json")...)), &js); err != nil {
		t.Fatal(err)
	}
	if js.Recipients != 3 || js.PhoneColumn != "Mobile Phone" || !slices.Equal(js.PhoneUnused, []string{"Phone"}) {
		t.Errorf("plan --json: %+v, want 3 recipients from Mobile Phone, Phone unused", js)
	}
}

// TestPhoneColumnPreviewAndRun: preview says the column on stderr (its
// stdout stays the request body), and run in its import summary; both
// send to the mobile numbers.
func TestPhoneColumnPreviewAndRun(t *testing.T) {
	const line = `phone column: "Mobile Phone" (also phone-like, not used: "Phone")`
	c := newCLI(t)
	msg := []string{"--template", "spring_sale", "--lang", "en_US", "--params", "First Name", "--region", "US"}
	out, errOut, err := c.run(append([]string{"campaign", "preview", crmExport}, msg...)...)
	if err != nil {
		t.Fatalf("preview: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, line+"\n") || strings.Contains(out, "phone column") || !strings.Contains(out, `"to": "+14155550132"`) {
		t.Errorf("preview: stdout\n%s\nstderr\n%s\nwant the mobile number on stdout and %q on stderr", out, errOut, line)
	}

	_, errOut, err = c.run(append([]string{"campaign", "run", crmExport, "--sandbox"}, msg...)...)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, line+"\n"+`campaign 1 "crm_export.csv": imported 3 recipients`) {
		t.Errorf("run's import summary lacks %q before the import line:\n%s", line, errOut)
	}
}
