package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/pgtest"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/pgstore"
	"github.com/wasend/wasend/internal/store/storetest"
)

// BenchmarkClaimRecord is internal/store's benchmark of that name on
// Postgres (storetest.BenchClaimRecord): 20,000 rows claimed and recorded
// 64 at a time by one runner. Its cpu-µs/msg is this process's, its
// srv-cpu-µs/msg the test server's (every process of it): on a loaded
// machine the CPU figures hold where the wall does not.
//
//	go test ./internal/store/pgstore/ -run '^$' -bench ClaimRecord -benchtime 1x
func BenchmarkClaimRecord(b *testing.B) { benchClaimRecord(b, 1, 0) }

// BenchmarkClaimRecord3Hosts is BenchmarkClaimRecord with three handles
// (three pools, as three hosts' processes) claiming the one campaign at
// once: their sending transactions take turns on the claim lock, so
// claims/s says what three hosts sustain on one server (issue 30's
// 3,000), with the hosts' work outside the store (HTTP) left out.
func BenchmarkClaimRecord3Hosts(b *testing.B) { benchClaimRecord(b, 3, 0) }

// BenchmarkClaimStartRecord is BenchmarkClaimRecord with every request
// marked started (Start) eight rows a transaction before its outcome is
// recorded, as internal/store's benchmark of that name does.
func BenchmarkClaimStartRecord(b *testing.B) { benchClaimRecord(b, 1, 8) }

func benchClaimRecord(b *testing.B, hosts, starts int) {
	srv := pgtest.Start(b)
	storetest.BenchClaimRecord(b, storetest.ClaimBench{
		NewDB: func(b *testing.B) string { return srv.NewDB(b, "") },
		Open: func(b *testing.B, db string, now func() time.Time) driver.Driver {
			st, err := pgstore.Open(b.Context(), db, pgstore.Options{Now: now, Location: time.UTC})
			if err != nil {
				b.Fatal(err)
			}
			return st
		},
		Ledger:    func(d driver.Driver) storetest.Ledger { return claim.New(d) },
		ServerCPU: serverCPU(b, srv.DSN("postgres")),
		Hosts:     hosts,
		Starts:    starts,
	})
}

// serverCPU is a function that reads the CPU time the local Postgres
// server at dsn has used: its postmaster's and its processes' (those
// reaped too), from /proc.
func serverCPU(b *testing.B, dsn string) func() time.Duration {
	c, err := pgx.Connect(b.Context(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(context.Background())
	var backend int
	if err := c.QueryRow(b.Context(), `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		b.Fatal(err)
	}
	postmaster := procStat(backend)[1]
	return func() time.Duration {
		st := procStat(int(postmaster))
		ticks := st[11] + st[12] + st[13] + st[14] // utime stime cutime cstime
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, d := range dirs {
			pid, _ := strconv.Atoi(filepath.Base(d))
			if st := procStat(pid); len(st) > 12 && st[1] == postmaster {
				ticks += st[11] + st[12]
			}
		}
		return time.Duration(ticks) * time.Second / 100 // USER_HZ
	}
}

// procStat is /proc/pid/stat's fields after the command's name, as
// numbers (0 where not one): [0] state, [1] ppid, [11] utime, [12] stime…;
// nil when the process is gone.
func procStat(pid int) []int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	out := make([]int64, len(fields))
	for i, f := range fields {
		out[i], _ = strconv.ParseInt(f, 10, 64)
	}
	return out
}
