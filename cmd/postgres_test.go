package cmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/pgtest"
)

// TestMain stops the postgres a test started.
func TestMain(m *testing.M) { pgtest.Main(m) }

// A Postgres URL in --db or WASEND_DB opens the store on Postgres: one
// that cannot be reached is an error naming the server, never the
// password.
func TestFactoryPostgresUnreachable(t *testing.T) {
	for _, tc := range []struct {
		name, db string
		env      map[string]string
	}{
		{name: "--db", db: "postgres://u:hunter2@127.0.0.1:1/wasend?connect_timeout=2"},
		{name: "WASEND_DB", env: map[string]string{"WASEND_DB": "postgresql://u:hunter2@127.0.0.1:1/wasend?connect_timeout=2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"WASEND_TZ": "UTC", "HOME": t.TempDir()}
			for k, v := range tc.env {
				env[k] = v
			}
			f := &Factory{DBPath: tc.db, Getenv: mapEnv(env), Now: time.Now, setsUp: true}
			st, err := f.Store(t.Context())
			if err == nil {
				st.Close()
				t.Fatal("opened a Postgres on a closed port")
			}
			if !strings.Contains(err.Error(), "127.0.0.1:1/wasend") || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q: want the server named, without the password", err)
			}
		})
	}
}

// The commands run on the store on Postgres as on a file: accounts, a
// campaign imported, the reads of status and list; the URL's password is
// in no output, hints and doctor included.
func TestFactoryPostgresCommands(t *testing.T) {
	const password = "pg-pw-never-shown"
	c := newCLI(t)
	c.db = pgtest.WithPassword(pgtest.Start(t).NewDB(t, ""), password)
	var outs []string
	ok := func(args ...string) string {
		t.Helper()
		out, errOut, err := c.run(args...)
		outs = append(outs, out, errOut)
		if err != nil {
			t.Fatalf("wasend %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		}
		return out
	}
	ok("account", "add", "main", "--phone-number-id", "100000000000061", "--tier", "active", "--token-env", "WASEND_TEST_TOKEN")
	if out := ok("account", "list"); !strings.Contains(out, "main") {
		t.Errorf("account list does not show the account added\n%s", out)
	}
	csv := filepath.Join(t.TempDir(), "list.csv")
	write(t, csv, "phone,name\n+4915112345678,Lena\n+4915112345679,Jonas\n")
	ok("campaign", "import", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name")
	var list []struct {
		ID    int64 `json:"id"`
		Total int   `json:"total"`
	}
	if err := json.Unmarshal([]byte(ok("campaign", "list", "--json")), &list); err != nil || len(list) != 1 || list[0].Total != 2 {
		t.Errorf("campaign list --json = %+v (%v), want one campaign of 2", list, err)
	}
	if out := ok("status"); !strings.Contains(out, "list.csv") {
		t.Errorf("status does not show the campaign\n%s", out)
	}
	ok("campaign", "pause", "1")
	out, errOut, _ := c.run("doctor")
	outs = append(outs, out, errOut)
	for _, o := range outs {
		if strings.Contains(o, password) {
			t.Fatalf("the URL's password is in the output:\n%s", o)
		}
	}
}
