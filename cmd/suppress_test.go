package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/ui"
)

var suppressNow = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

// suppressCLI runs wasend on the database db with env as its environment.
type suppressCLI struct {
	t   *testing.T
	db  string
	env map[string]string
}

func newSuppressCLI(t *testing.T, env map[string]string) *suppressCLI {
	if env == nil {
		env = map[string]string{}
	}
	env["WASEND_TZ"] = "UTC"
	c := &suppressCLI{t: t, db: filepath.Join(t.TempDir(), "wasend.db"), env: env}
	// An empty database: commands that only read fail where there is none.
	st, err := store.Open(t.Context(), c.db, driver.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	return c
}

func (c *suppressCLI) run(args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	var out, errOut bytes.Buffer
	f := &Factory{
		IO:     ui.Test(&out, &errOut),
		Getenv: func(k string) string { return c.env[k] },
		Now:    func() time.Time { return suppressNow },
	}
	root := NewRootCmd(f)
	root.SetArgs(append([]string{"--db", c.db}, args...))
	err := root.ExecuteContext(c.t.Context())
	code = exitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

func (c *suppressCLI) mustRun(args ...string) string {
	c.t.Helper()
	out, errOut, code := c.run(args...)
	if code != ExitOK {
		c.t.Fatalf("wasend %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

func TestSuppressCommands(t *testing.T) {
	cli := newSuppressCLI(t, map[string]string{"WASEND_REGION": "DE"})
	steps := []struct {
		args     []string
		wantOut  string
		wantCode int
		wantErr  string // in stderr
	}{
		{args: []string{"suppress", "list"}, wantOut: ""},
		{
			// National numbers take $WASEND_REGION; two spellings of one number count once.
			args:    []string{"suppress", "add", "+49 151 23456789", "0151 23456780", "004915123456789", "--reason", "replied STOP"},
			wantOut: "added 2, already listed 0\n",
		},
		{
			args:    []string{"suppress", "add", "+447911123456", "0151 23456780"},
			wantOut: "added 1, already listed 1\n",
		},
		{
			args:    []string{"suppress", "list"},
			wantOut: "+447911123456\t-\t2026-03-02 09:30\n+4915123456780\treplied STOP\t2026-03-02 09:30\n+4915123456789\treplied STOP\t2026-03-02 09:30\n",
		},
		{
			args:     []string{"suppress", "add", "+4917199999999", "12", "call me"},
			wantCode: ExitUsage, wantErr: `invalid number "12": too short; "call me": not a number; nothing changed`,
		},
		{
			args:     []string{"suppress", "add", "0151 23456781", "--region", ""},
			wantCode: ExitUsage, wantErr: `"0151 23456781": a national number without its country; pass --region CC (e.g. --region DE) or write it with +CC`,
		},
		{
			args:     []string{"suppress", "add", "0151 23456781", "--region", "XX"},
			wantCode: ExitUsage, wantErr: `--region "XX"`,
		},
		{args: []string{"suppress", "add"}, wantCode: ExitUsage, wantErr: "requires at least 1 arg"},
		{args: []string{"suppress", "remove"}, wantCode: ExitUsage, wantErr: "requires at least 1 arg"},
		{args: []string{"suppress", "list", "x"}, wantCode: ExitUsage},
		{
			args:    []string{"suppress", "remove", "+447911123456", "+4917199999999", "--region", "GB"},
			wantOut: "removed 1, not listed 1\n",
		},
		{
			args:     []string{"suppress", "remove", "garbage"},
			wantCode: ExitUsage, wantErr: `invalid number "garbage"`,
		},
		{
			args:    []string{"suppress", "list"},
			wantOut: "+4915123456780\treplied STOP\t2026-03-02 09:30\n+4915123456789\treplied STOP\t2026-03-02 09:30\n",
		},
	}
	for _, s := range steps {
		out, errOut, code := cli.run(s.args...)
		name := strings.Join(s.args, " ")
		if code != s.wantCode {
			t.Fatalf("%s: exit %d, want %d\nstderr: %s", name, code, s.wantCode, errOut)
		}
		if s.wantCode == ExitOK && out != s.wantOut {
			t.Errorf("%s: stdout\n%s\nwant\n%s", name, out, s.wantOut)
		}
		if !strings.Contains(errOut, s.wantErr) {
			t.Errorf("%s: stderr %q does not contain %q", name, errOut, s.wantErr)
		}
	}
}

func TestSuppressListJSON(t *testing.T) {
	cli := newSuppressCLI(t, nil)
	if out := cli.mustRun("suppress", "list", "--json"); out != "[]\n" {
		t.Errorf("empty list: %q, want []", out)
	}
	cli.mustRun("suppress", "add", "+4915123456789", "--reason", "bounced")
	cli.mustRun("suppress", "add", "+447911123456")
	var got []map[string]any
	if err := json.Unmarshal([]byte(cli.mustRun("suppress", "list", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"phone": "+447911123456", "reason": "", "created_at": "2026-03-02T09:30:00Z"},
		{"phone": "+4915123456789", "reason": "bounced", "created_at": "2026-03-02T09:30:00Z"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		for k, v := range want[i] {
			if got[i][k] != v {
				t.Errorf("row %d: %s = %v, want %v", i, k, got[i][k], v)
			}
		}
		if len(got[i]) != len(want[i]) {
			t.Errorf("row %d: keys %v, want %v", i, got[i], want[i])
		}
	}
}

func writeSuppressFixture(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSuppressImport(t *testing.T) {
	cli := newSuppressCLI(t, nil)
	cli.mustRun("suppress", "add", "+447911123456")
	csv := writeSuppressFixture(t, "optouts.csv", "name;Mobile\n"+
		"Ann;0151 23456789\n"+ // line 2
		"Bob;+447911123456\n"+ // 3: already listed
		"Cy;not a phone\n"+ // 4
		";\n"+ // 5: blank, ignored
		"Di;+49 151 23456789\n"+ // 6: repeat of line 2
		"Ed;0171 9876543\n") // 7
	out, errOut, code := cli.run("suppress", "import", csv, "--region", "DE", "--reason", "replied STOP")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "added 2, already listed 1, skipped 2\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	for _, want := range []string{
		`line 4: "not a phone": column Mobile: not a number`,
		`line 6: "+49 151 23456789": duplicate of line 2 (+4915123456789)`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not contain %q:\n%s", want, errOut)
		}
	}
	// The already listed number takes the file's reason.
	want := "+447911123456\treplied STOP\t2026-03-02 09:30\n" +
		"+4915123456789\treplied STOP\t2026-03-02 09:30\n" +
		"+491719876543\treplied STOP\t2026-03-02 09:30\n"
	if got := cli.mustRun("suppress", "list"); got != want {
		t.Errorf("list after import:\n%s\nwant\n%s", got, want)
	}

	// Whole-file problems store nothing.
	for _, c := range []struct {
		content, wantErr string
		wantCode         int
	}{
		{"name\nAnn\n", "no phone column", ExitError},
		{"phone\n+4915100000001\n\"broken\n", "nothing stored", ExitError},
	} {
		_, errOut, code := cli.run("suppress", "import", writeSuppressFixture(t, "bad.csv", c.content))
		if code != c.wantCode || !strings.Contains(errOut, c.wantErr) {
			t.Errorf("import %q: exit %d, stderr %q; want %d and %q", c.content, code, errOut, c.wantCode, c.wantErr)
		}
	}
	if _, errOut, code := cli.run("suppress", "import", csv, "--region", "XX"); code != ExitUsage {
		t.Errorf("unknown region: exit %d, %s", code, errOut)
	}
	if _, _, code := cli.run("suppress", "import", filepath.Join(t.TempDir(), "missing.csv")); code != ExitError {
		t.Errorf("missing file: exit %d, want %d", code, ExitError)
	}
	if got := cli.mustRun("suppress", "list"); got != want {
		t.Errorf("list after failed imports:\n%s\nwant\n%s", got, want)
	}
}

// A number suppressed through the CLI is skipped by the next campaign import.
func TestSuppressedNumberSkippedByCampaignImport(t *testing.T) {
	cli := newSuppressCLI(t, nil)
	cli.mustRun("suppress", "add", "0151 23456789", "--region", "DE", "--reason", "replied STOP")

	st, err := store.Open(t.Context(), cli.db, driver.Options{Now: func() time.Time { return suppressNow }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	file := "phone,name\n+4915123456780,Ann\n+49 151 23456789,Bob\n"
	c, skipped, err := runner.Import(t.Context(), st, strings.NewReader(file), "promo.csv", campaign.Campaign{
		Name: "promo", Fingerprint: "fp-promo", Source: "promo.csv",
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "t", Lang: "en_US", Params: []string{"name"}},
	}, "DE")
	if err != nil {
		t.Fatal(err)
	}
	want := []campaign.Skip{{Line: 3, Input: "+49 151 23456789", Reason: "suppressed: replied STOP"}}
	if len(skipped) != 1 || skipped[0] != want[0] {
		t.Errorf("skipped %+v, want %+v", skipped, want)
	}
	if c.Imported != 1 || c.Skipped != 1 {
		t.Errorf("imported %d, skipped %d; want 1, 1", c.Imported, c.Skipped)
	}
}
