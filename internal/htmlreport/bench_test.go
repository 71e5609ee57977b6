package htmlreport_test

import (
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/htmlreport"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
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
	st, err := store.Open(b.Context(), path, driver.Options{MustExist: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var size int64
	cpu0 := cpuTime(b)
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
	// The CPU the process spent (SQLite's work included), apart from the
	// wall clock a loaded machine stretches.
	b.ReportMetric((cpuTime(b)-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime is the process's user and system time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var _ io.Writer = (*countingWriter)(nil)
