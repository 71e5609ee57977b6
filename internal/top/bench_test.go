package top

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

// BenchmarkRefresh is one refresh of the dashboard and its drawing at
// 80×24: status's reads (report.Status), the inbox's backlog and the view,
// on the database WASEND_BENCH_DB names. bench/status.sh builds a large one
// (bench/out/status-1m.db: a 1M-row campaign with 250,000 attempts):
//
//	WASEND_BENCH_DB=$PWD/bench/out/status-1m.db go test -run '^$' -bench Refresh ./internal/top
func BenchmarkRefresh(b *testing.B) {
	path := os.Getenv("WASEND_BENCH_DB")
	if path == "" {
		b.Skip("set WASEND_BENCH_DB to a database; bench/status.sh builds bench/out/status-1m.db")
	}
	ctx := context.Background()
	st, err := store.Open(ctx, path, driver.Options{Location: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	reads := readmodel.New(st)
	m := New(ctx, Options{
		Status: func(ctx context.Context) (Reading, error) {
			out, err := report.Reporter{Src: st, Reads: Reads(reads), Now: time.Now(), Loc: time.UTC}.Status(ctx)
			return Reading{Status: out}, err
		},
		Inbox: reads.WebhookBacklog,
		Moves: st,
	})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	// The process's CPU time per refresh, beside the wall time: on a shared
	// machine the wall time counts the waits for a core too, and a refresh
	// a second costs a core's share of its CPU time.
	cpu0 := cpuTime(b)
	for b.Loop() {
		m.Refresh()
		if m.err != nil {
			b.Fatal(m.err)
		}
		_ = m.View()
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
