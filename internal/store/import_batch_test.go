package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
)

// AddBatch stores and skips exactly what Add, row by row, does, and what a
// plain model of the rules says: the same rows, the same reasons, in file
// order — across statement boundaries, with duplicates inside one batch and
// of earlier batches, suppressed numbers among them, and rows given to Add
// before.
func TestAddBatchMatchesAdd(t *testing.T) {
	const n = 3*ImportBatch + 17
	var msgs []campaign.Message
	for i := range n {
		p := phone(i % 600) // lines 600… repeat earlier numbers
		if i%97 == 5 {
			p = phone(i - 1) // a duplicate of the line before, in the same batch
		}
		m := campaign.Message{Line: i + 2, Input: fmt.Sprintf("in %d", i), Phone: p, Params: []string{"Ann", fmt.Sprint(i)}}
		if i%50 == 0 {
			m.Header, m.Buttons = "https://x.test/a.png", []string{"o/" + fmt.Sprint(i)}
		}
		if i%70 == 0 {
			m.Params = []string{`quote " <tag> & ü`, "tab\tin"}
		}
		msgs = append(msgs, m)
	}
	suppress := func(st *Store) {
		for _, s := range []struct{ phone, reason string }{{phone(7), "STOP received"}, {phone(300), ""}} {
			if _, err := st.db.ExecContext(t.Context(), `INSERT INTO suppressions (phone, reason, created_at) VALUES (?, ?, 1)`, s.phone, s.reason); err != nil {
				t.Fatal(err)
			}
		}
	}
	const byAdd = 10 // the first rows go through Add in both stores

	one := openTest(t, newFakeClock())
	suppress(one)
	imOne, err := one.Import(t.Context(), testCampaign("fp"))
	if err != nil {
		t.Fatal(err)
	}
	var wantSkips []campaign.Skip
	for _, m := range msgs {
		reason, err := imOne.Add(t.Context(), m)
		if err != nil {
			t.Fatal(err)
		}
		if reason != "" {
			wantSkips = append(wantSkips, campaign.Skip{Line: m.Line, Input: m.Input, Reason: reason})
			if err := imOne.Skip(t.Context(), m.Line, m.Input, reason); err != nil {
				t.Fatal(err)
			}
		}
	}
	var model []campaign.Skip
	firstLine := map[string]int{}
	for _, m := range msgs {
		reason := ""
		switch first, dup := firstLine[m.Phone]; {
		case m.Phone == phone(7):
			reason = "suppressed: STOP received"
		case m.Phone == phone(300):
			reason = "suppressed (opted out)"
		case dup:
			reason = fmt.Sprintf("duplicate of line %d (%s)", first, m.Phone)
		default:
			firstLine[m.Phone] = m.Line
		}
		if reason != "" {
			model = append(model, campaign.Skip{Line: m.Line, Input: m.Input, Reason: reason})
		}
	}
	if !slices.Equal(wantSkips, model) {
		t.Errorf("Add skipped\n%v\nthe model skips\n%v", wantSkips, model)
	}
	if len(wantSkips) < 150 {
		t.Fatalf("only %d rows skipped: the test lost its duplicates", len(wantSkips))
	}
	cOne, err := imOne.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	batch := openTest(t, newFakeClock())
	suppress(batch)
	imBatch, err := batch.Import(t.Context(), testCampaign("fp"))
	if err != nil {
		t.Fatal(err)
	}
	var skips []campaign.Skip
	for _, m := range msgs[:byAdd] {
		reason, err := imBatch.Add(t.Context(), m)
		if err != nil {
			t.Fatal(err)
		}
		if reason != "" {
			skips = append(skips, campaign.Skip{Line: m.Line, Input: m.Input, Reason: reason})
		}
	}
	for rest := msgs[byAdd:]; len(rest) > 0; {
		k := min(len(rest), 300) // batches that don't line up with ImportBatch
		got, err := imBatch.AddBatch(t.Context(), rest[:k])
		if err != nil {
			t.Fatal(err)
		}
		skips = append(skips, got...)
		rest = rest[k:]
	}
	if err := imBatch.SkipBatch(t.Context(), skips); err != nil {
		t.Fatal(err)
	}
	cBatch, err := imBatch.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	if !slices.Equal(skips, wantSkips) {
		t.Errorf("AddBatch skipped\n%v\nAdd skipped\n%v", skips, wantSkips)
	}
	if cBatch.Imported != cOne.Imported || cBatch.Skipped != cOne.Skipped || cOne.Imported+cOne.Skipped != n {
		t.Errorf("AddBatch: %d imported, %d skipped; Add: %d, %d", cBatch.Imported, cBatch.Skipped, cOne.Imported, cOne.Skipped)
	}
	const q = `SELECT group_concat(line || '|' || input || '|' || phone || '|' || params || '|' || body || '|' || extras || '|' || state, ';')
		FROM (SELECT * FROM messages ORDER BY id)`
	var a, b string
	if err := one.db.QueryRowContext(t.Context(), q).Scan(&a); err != nil {
		t.Fatal(err)
	}
	if err := batch.db.QueryRowContext(t.Context(), q).Scan(&b); err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("stored messages differ:\nAdd:      %.300s\nAddBatch: %.300s", a, b)
	}
	stored, err := batch.Skipped(t.Context(), cBatch.ID)
	if err != nil || !slices.Equal(stored, wantSkips) {
		t.Errorf("stored skipped rows = %v, %v", stored, err)
	}
}

func TestAppendJSONStrings(t *testing.T) {
	for _, ss := range [][]string{nil, {}, {""}, {"a", "b"}, {"ü ß 中"}, {`"`, `\`, "<>&", "\x01\n\t", "\u2028\u2029", "\xff"}} {
		want := string(must(json.Marshal(nonNil(ss))))
		if got := string(appendJSONStrings(nil, ss)); got != want {
			t.Errorf("appendJSONStrings(%q) = %s, want %s", ss, got, want)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
