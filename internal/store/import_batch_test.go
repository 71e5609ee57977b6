package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
)

// AddBatch stores exactly what Add, row by row, does — every row given, in
// file order, across statement boundaries — and SkipBatch stores the
// skipped rows given to it. (Which rows are skipped is internal/screen's;
// see its tests.)
func TestAddBatchMatchesAdd(t *testing.T) {
	const n = 3*ImportBatch + 17
	var msgs []campaign.Message
	for i := range n {
		m := campaign.Message{Line: i + 2, Input: fmt.Sprintf("in %d", i), Phone: phone(i), Params: []string{"Ann", fmt.Sprint(i)}}
		if i%50 == 0 {
			m.Header, m.Buttons = "https://x.test/a.png", []string{"o/" + fmt.Sprint(i)}
		}
		if i%70 == 0 {
			m.Params = []string{`quote " <tag> & ü`, "tab\tin"}
		}
		msgs = append(msgs, m)
	}
	var skips []campaign.Skip
	for i := range 2*ImportBatch + 3 {
		skips = append(skips, campaign.Skip{Line: n + 2 + i, Input: fmt.Sprint("x", i), Reason: fmt.Sprint("reason ", i)})
	}
	const byAdd = 10 // the first rows go through Add in both stores

	one := openTest(t, newFakeClock())
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

	batch := openTest(t, newFakeClock())
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
		k := min(len(rest), 300) // batches that don't line up with ImportBatch
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
	stored, err := readmodel.New(batch).Skipped(t.Context(), cBatch.ID)
	if err != nil || !slices.Equal(stored, skips) {
		t.Errorf("stored skipped rows = %.200v, %v", stored, err)
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
