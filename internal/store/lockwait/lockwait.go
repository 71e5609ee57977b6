// Package lockwait waits for a database lock another process holds, in
// short pauses.
//
// SQLite's own busy handler sleeps 1, 2, 5, 10, 15, 20, 25 … up to 100 ms
// between tries, so a write that comes while another process holds the
// lock for a few milliseconds may sleep tens after the lock is free: a
// webhook receiver beside a sending campaign slept 188 times in SQLite
// (~2.9 s in all, 10 of them 100 ms) in a 10 s run of bench/webhook.sh,
// and the sender 183 times (issue 25). wasend's write transactions hold
// the lock for milliseconds, so the store's writer has no busy timeout of
// its own and waits here instead (BenchmarkWriteBehindAnotherProcess in
// internal/store: writes behind another process's 2 ms transactions, p99
// 62–175 ms in SQLite's handler, 29–39 ms here, at load average 13).
package lockwait

import (
	"context"
	"time"
)

// The pauses between tries: from MinPause, doubling, up to MaxPause.
const (
	MinPause = 50 * time.Microsecond
	MaxPause = time.Millisecond
)

// Do runs try until it returns an error busy does not report, ctx ends or
// timeout has passed since the first try, pausing between tries; it
// returns try's last error. try must undo what it did before it returns a
// busy error (a write transaction rolls back).
func Do(ctx context.Context, timeout time.Duration, busy func(error) bool, try func() error) error {
	deadline := time.Now().Add(timeout)
	for pause := MinPause; ; pause = min(2*pause, MaxPause) {
		err := try()
		if err == nil || !busy(err) || ctx.Err() != nil || !time.Now().Before(deadline) {
			return err
		}
		time.Sleep(pause)
	}
}
