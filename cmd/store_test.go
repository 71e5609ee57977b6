package cmd

import (
	"bytes"
	"strings"
	"testing"
)

// store migrate names what is missing or wrong in its flags, and never
// repeats a --to that may carry a password.
func TestStoreMigrateFlags(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"store", "migrate", "--to", "postgres://u@db/w"}, "needs both --from FILE.db and --to postgres://…"},
		{[]string{"store", "migrate", "--from", c.db}, "needs both --from FILE.db and --to postgres://…"},
		{[]string{"store", "migrate", "--from", "postgres://u@db/w", "--to", "postgres://u@db/w"}, "--from names a Postgres database"},
		{[]string{"store", "migrate", "--from", c.db, "--to", "mysql://u:s3cret-pw@db/w"}, "--to must be a Postgres URL"},
	} {
		msg := c.usage(tc.args...)
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, "s3cret-pw") {
			t.Errorf("wasend %s: %q, want %q and no password", strings.Join(tc.args, " "), msg, tc.want)
		}
	}
}

// A Postgres that cannot be reached is an error that names neither the
// URL nor its password, on stdout or stderr.
func TestStoreMigrateHidesTheURL(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
	url := "postgres://wasend:s3cret-pw@127.0.0.1:1/wasend?connect_timeout=2"
	out, errOut, err := c.run("store", "migrate", "--from", c.db, "--to", url)
	if err == nil {
		t.Fatal("store migrate to a closed port succeeded")
	}
	var msg bytes.Buffer
	if code := exitCode(err, &msg); code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	for _, s := range []string{out, errOut, msg.String()} {
		if strings.Contains(s, "s3cret-pw") || strings.Contains(s, "127.0.0.1:1/wasend") {
			t.Errorf("the URL or its password printed: %q", s)
		}
	}
	if !strings.Contains(msg.String(), "error: the Postgres database: ") {
		t.Errorf("error %q: want it to say which database", msg.String())
	}
}
