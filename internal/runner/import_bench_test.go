package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store"
)

// BenchmarkImport100k measures a whole import of a 100,000-row file (phone +
// 3 parameter columns): parse, normalise, de-duplicate, store in one
// transaction. Reported as rows/s.
func BenchmarkImport100k(b *testing.B) {
	const n = 100_000
	var csv bytes.Buffer
	csv.WriteString("phone,name,code,city\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&csv, "+49151%08d,Person %d,C%06d,Berlin\n", 10000000+i, i, i)
	}
	ctx := context.Background()
	spec := campaign.Spec{Kind: campaign.KindTemplate, Template: "t", Lang: "en_US", Params: []string{"name", "code", "city"}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c, _, err := runner.Import(ctx, st, bytes.NewReader(csv.Bytes()), "bench.csv",
			campaign.Campaign{Name: "bench", Fingerprint: "bench", Source: "bench.csv", Spec: spec}, "")
		if err != nil {
			b.Fatal(err)
		}
		if c.Imported != n {
			b.Fatalf("imported %d, want %d", c.Imported, n)
		}
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}
