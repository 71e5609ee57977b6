package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

// Importing a campaign: rows added, skipped, committed or rolled back.

func (s suite) importTests() []sub {
	return []sub{
		{"rollback leaves nothing", s.testImportRollbackLeavesNothing},
		{"commit", s.testImportCommit},
		{"AddBatch matches Add", s.testAddBatchMatchesAdd},
		{"an import continues an unfinished campaign", s.testImportContinues},
	}
}

func testCampaign(fp string) campaign.Campaign {
	return campaign.Campaign{
		Name: "spring", Fingerprint: fp, Source: "spring.csv",
		Spec: campaign.Spec{Kind: campaign.KindText, Text: "Hi {{name}}"},
	}
}

func (s suite) testImportRollbackLeavesNothing(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	im, err := st.Import(t.Context(), testCampaign("fp"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := im.Add(t.Context(), campaign.Message{Line: i + 2, Input: Phone(i), Phone: Phone(i), Body: "Hi"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := im.Skip(t.Context(), 5, "garbage", "not a phone number"); err != nil {
		t.Fatal(err)
	}
	im.Rollback()
	im.Rollback() // safe twice

	cs, err := readmodel.New(st).Campaigns(t.Context())
	if err != nil || len(cs) != 0 {
		t.Errorf("campaigns after rollback = %+v, %v; want none", cs, err)
	}
	for _, table := range []string{"campaigns", "messages", "skipped"} {
		if n := CountRows(t, st, `SELECT count(*) FROM `+table); n != 0 {
			t.Errorf("%s has %d rows after rollback", table, n)
		}
	}
	if _, err := im.Commit(t.Context()); err == nil {
		t.Errorf("Commit after Rollback succeeded")
	}
	// The write lock was released: other writes and a new import proceed.
	MustAccount(t, st, "a", campaign.TierNew, campaign.Overrides{})
	if c := MustCampaign(t, st, "again", 2); c.Imported != 2 {
		t.Errorf("second import: %+v", c)
	}
}

func (s suite) testImportCommit(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	im, err := st.Import(t.Context(), testCampaign("fp"))
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	rows := []struct {
		line  int
		input string
		phone string
		skip  string // the screen's reason (internal/screen); "" stores the row
	}{
		{2, "0151 00000001", Phone(1), ""},
		{3, Phone(2), Phone(2), ""},
		{4, "+49 151 00000001", Phone(1), "duplicate of line 2 (" + Phone(1) + ")"},
		{5, Phone(50), Phone(50), "suppressed: STOP received"},
		{6, Phone(51), Phone(51), "suppressed: opted out"},
		{7, Phone(3), Phone(3), ""},
		{8, Phone(2), Phone(2), "duplicate of line 3 (" + Phone(2) + ")"},
	}
	var wantSkipped []campaign.Skip
	for _, r := range rows {
		if reason := r.skip; reason != "" {
			if err := im.Skip(t.Context(), r.line, r.input, reason); err != nil {
				t.Fatal(err)
			}
			wantSkipped = append(wantSkipped, campaign.Skip{Line: r.line, Input: r.input, Reason: reason})
			continue
		}
		if _, err := im.Add(t.Context(), campaign.Message{Line: r.line, Input: r.input, Phone: r.phone, Body: "Hi"}); err != nil {
			t.Fatalf("line %d: %v", r.line, err)
		}
	}
	c, err := im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	im.Rollback() // safe after Commit
	if c.ID == 0 || c.Imported != 3 || c.Skipped != 4 || c.State != campaign.CampaignRunning {
		t.Errorf("committed campaign = %+v, want 3 imported, 4 skipped, running", c)
	}
	stored, err := st.Campaign(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Imported != 3 || stored.Skipped != 4 || stored.Spec.Text != "Hi {{name}}" || !stored.CreatedAt.Equal(t0) {
		t.Errorf("stored campaign = %+v", stored)
	}
	counts, err := st.Counts(t.Context(), c.ID)
	if err != nil || counts[campaign.Pending] != 3 || counts.Total() != 3 {
		t.Errorf("counts = %v, %v; want 3 pending", counts, err)
	}
	skipped, err := readmodel.New(st).Skipped(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != len(wantSkipped) {
		t.Fatalf("skipped = %+v, want %+v", skipped, wantSkipped)
	}
	for i := range skipped {
		if skipped[i] != wantSkipped[i] {
			t.Errorf("skipped[%d] = %+v, want %+v", i, skipped[i], wantSkipped[i])
		}
	}
	if byFP := CountRows(t, st, `SELECT id FROM campaigns WHERE fingerprint = ?`, "fp"); byFP != int(c.ID) {
		t.Errorf("by fingerprint: campaign %d, want %d", byFP, c.ID)
	}

	// The same file and message again is the same campaign, not a new one.
	if _, err := st.Import(t.Context(), testCampaign("fp")); !errors.Is(err, driver.ErrExists) {
		t.Errorf("second import with the same fingerprint: err = %v, want driver.ErrExists", err)
	}
	MustAccount(t, st, "a", campaign.TierNew, campaign.Overrides{}) // the lock was released
}

// AddBatch stores exactly what Add, row by row, does — every row given, in
// file order, across statement boundaries — and SkipBatch stores the
// skipped rows given to it. (Which rows are skipped is internal/screen's;
// see its tests.)
func (s suite) testAddBatchMatchesAdd(t *testing.T) {
	const n = 3*driver.ImportBatch + 17
	var msgs []campaign.Message
	for i := range n {
		m := campaign.Message{Line: i + 2, Input: fmt.Sprintf("in %d", i), Phone: Phone(i), Params: []string{"Ann", fmt.Sprint(i)}}
		if i%50 == 0 {
			m.Header, m.Buttons = "https://x.test/a.png", []string{"o/" + fmt.Sprint(i)}
		}
		if i%70 == 0 {
			m.Params = []string{`quote " <tag> & ü`, "tab\tin"}
		}
		msgs = append(msgs, m)
	}
	var skips []campaign.Skip
	for i := range 2*driver.ImportBatch + 3 {
		skips = append(skips, campaign.Skip{Line: n + 2 + i, Input: fmt.Sprint("x", i), Reason: fmt.Sprint("reason ", i)})
	}
	const byAdd = 10 // the first rows go through Add in both stores

	one := s.openTest(t, newFakeClock())
	imOne, err := one.Import(t.Context(), testCampaign("fp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if reason, err := imOne.Add(t.Context(), m); err != nil || reason != "" {
			imOne.Rollback()
			t.Fatalf("Add: %q, %v", reason, err)
		}
	}
	cOne, err := imOne.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	batch := s.openTest(t, newFakeClock())
	imBatch, err := batch.Import(t.Context(), testCampaign("fp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs[:byAdd] {
		if _, err := imBatch.Add(t.Context(), m); err != nil {
			imBatch.Rollback()
			t.Fatal(err)
		}
	}
	for rest := msgs[byAdd:]; len(rest) > 0; {
		k := min(len(rest), 300) // batches that don't line up with driver.ImportBatch
		got, err := imBatch.AddBatch(t.Context(), rest[:k])
		if err != nil || len(got) != 0 {
			imBatch.Rollback()
			t.Fatalf("AddBatch: skipped %v, %v", got, err)
		}
		rest = rest[k:]
	}
	if err := imBatch.SkipBatch(t.Context(), skips); err != nil {
		imBatch.Rollback()
		t.Fatal(err)
	}
	cBatch, err := imBatch.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if cBatch.Imported != n || cOne.Imported != n || cBatch.Skipped != len(skips) {
		t.Errorf("AddBatch: %d imported, %d skipped; Add: %d imported; want %d, %d", cBatch.Imported, cBatch.Skipped, cOne.Imported, n, len(skips))
	}
	// Read in Go, not concatenated in SQL: the check runs on every driver.
	stored := func(d driver.Driver) string {
		rows, err := checked(d).QueryContext(t.Context(), `SELECT line, input, phone, params, body, extras, state FROM messages ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var (
				line                                      int64
				input, phone, params, body, extras, state string
			)
			if err := rows.Scan(&line, &input, &phone, &params, &body, &extras, &state); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%d|%s|%s|%s|%s|%s|%s;", line, input, phone, params, body, extras, state)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	a, b := stored(one), stored(batch)
	if a != b {
		t.Errorf("stored messages differ:\nAdd:      %.300s\nAddBatch: %.300s", a, b)
	}
	skipped, err := readmodel.New(batch).Skipped(t.Context(), cBatch.ID)
	if err != nil || !slices.Equal(skipped, skips) {
		t.Errorf("stored skipped rows = %.200v, %v", skipped, err)
	}
}
