package cmd

import (
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A status that cannot apply is skipped with its reason: webhook import
// names it, the statuses after it apply, and status warns about it.
func TestWebhookImportSkipsWhatCannotApply(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	c.now = showT0.Add(48 * time.Hour)
	db, err := sql.Open("sqlite3", c.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER refuse BEFORE UPDATE OF delivery ON messages WHEN OLD.wamid = 'wamid.HBgL03'
		BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
	at := showT0.Add(2 * time.Minute)
	file := statusFile(t,
		statusLine(t, "wamid.HBgL03", "delivered", "4915100000001", "", at, 0),
		statusLine(t, "wamid.HBgL02", "delivered", "4915100000000", "", at, 0))
	var rep applyJSON
	if err := json.Unmarshal([]byte(c.ok("webhook", "import", file, "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Bodies != 2 || len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0], "wamid.HBgL03") ||
		!strings.Contains(rep.Skipped[0], "refused by the test") || rep.Advanced != 1 {
		t.Errorf("import = %+v, want 2 bodies, HBgL03's status skipped with its reason, HBgL02's applied", rep)
	}
	_, stderr, err := c.run("status")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "webhooks: 1 bodies of the last 24 h kept with a reason") || !strings.Contains(stderr, "refused by the test") {
		t.Errorf("status does not warn of the skipped status:\n%s", stderr)
	}
}
