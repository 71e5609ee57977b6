package htmlreport_test

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/htmlreport"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
)

// countingWriter counts the page's bytes.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkReport reads and renders campaign 1 of the database named by
// WASEND_REPORT_DB: bench/report.sh builds one of 1,000,000 rows and runs
// this benchmark on it (issue 29: under 5 s, at most 2 MB).
func BenchmarkReport(b *testing.B) {
	path := os.Getenv("WASEND_REPORT_DB")
	if path == "" {
		b.Skip("WASEND_REPORT_DB names no database: bench/report.sh builds a 1M-row one and runs this benchmark")
	}
	st, err := store.Open(b.Context(), path, store.Options{MustExist: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var size int64
	for b.Loop() {
		c, err := htmlreport.Load(b.Context(), readmodel.New(st), 1, htmlreport.Options{})
		if err != nil {
			b.Fatal(err)
		}
		w := &countingWriter{}
		if err := htmlreport.Render(w, htmlreport.Report{Campaigns: []htmlreport.Campaign{c}, Generated: time.Now()}); err != nil {
			b.Fatal(err)
		}
		size = w.n
	}
	b.ReportMetric(float64(size), "bytes/page")
}

var _ io.Writer = (*countingWriter)(nil)
