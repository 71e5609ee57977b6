//go:build torture

package torture

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDiskFull puts the database on a small tmpfs and fills the disk
// while a campaign runs. Pass: wasend exits non-zero with a clear error
// within seconds (no panic, no "database is locked", no endless retry);
// every row recorded as sent before stays sent; and once space is freed
// the same command resumes and completes with nobody messaged twice.
// Mounting needs root; elsewhere the scenario is skipped.
func TestDiskFull(t *testing.T) {
	n := size(3000, 8000)
	seed := testSeed(t)
	w := newWorld(t, "--throughput", "-1", "--pair-interval", "-1s", "--seed", fmt.Sprint(seed),
		"--slow", "0.05", "--slow-delay", "100ms", "--drop", "0.01")
	mnt := filepath.Join(w.Dir, "disk")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs for the full disk (%v: %s); skipped", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	w.DB = filepath.Join(mnt, "wasend.db")
	lim := limit{rate: 400, burst: 20}
	w.setup(lim.rate, lim.burst, 1000000, threeAccounts)
	csv := w.WriteCSV("disk.csv", 4915112400000, n)
	run := runArgs(csv)

	p := w.Start(run...)
	w.WaitFor(60*time.Second, "a fifth of the campaign accepted", func() bool {
		return len(w.api.Records(t)) >= n/5
	})
	// What wasend has recorded as sent before the disk fills must survive.
	sentBefore := map[string]string{}
	for _, r := range w.Rows() {
		if r.State == "sent" {
			sentBefore[r.Phone] = r.WAMID
		}
	}
	filler := filepath.Join(mnt, "filler")
	fillDisk(t, filler)
	full := time.Now()
	t.Logf("disk full with %d rows sent", len(sentBefore))

	var r result
	select {
	case <-p.Done():
		r = p.Wait(t)
	case <-time.After(60 * time.Second):
		p.Signal(t, syscall.SIGKILL)
		t.Fatalf("wasend still running 60s after the disk filled: %s", p.Wait(t))
	}
	stopped := time.Since(full)
	checkOutput(t, "campaign run on a full disk", r)
	switch {
	case r.Code == 0:
		t.Errorf("campaign run on a full disk: exit 0; want an error\n%s", r)
	case r.Signal != 0:
		t.Errorf("campaign run on a full disk: died of %v\n%s", r.Signal, r)
	case !strings.Contains(strings.ToLower(r.Stderr), "full"):
		t.Errorf("campaign run on a full disk: exit %d without saying the disk is full\n%s", r.Code, r)
	}
	t.Logf("wasend stopped %v after the disk filled: exit %d: %s", stopped.Round(time.Millisecond), r.Code, lastLine(r.Stderr))

	lost := 0
	checkKept := func(when string) {
		now := map[string]row{}
		for _, r := range w.Rows() {
			now[r.Phone] = r
		}
		for phone, wamid := range sentBefore {
			if got := now[phone]; got.State != "sent" || got.WAMID != wamid {
				lost++
				t.Errorf("%s: %s was sent (wamid %s), now %s (wamid %s)", when, phone, wamid, got.State, got.WAMID)
			}
		}
	}
	checkKept("after the full disk")

	// Running the same command again before freeing space fails the same
	// clear way, at once, and changes nothing.
	again := time.Now()
	r2 := w.Run(run...)
	checkOutput(t, "campaign run again on the still full disk", r2)
	if r2.Code == 0 || r2.Signal != 0 || !strings.Contains(strings.ToLower(r2.Stderr), "full") {
		t.Errorf("campaign run again on the still full disk: want a non-zero exit saying the disk is full\n%s", r2)
	}
	t.Logf("run again on the full disk: exit %d after %v: %s", r2.Code, time.Since(again).Round(time.Millisecond), lastLine(r2.Stderr))
	checkKept("after running again on the full disk")

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	resumed := w.Run(run...)
	checkOutput(t, "campaign run after freeing space", resumed)
	if resumed.Code != 0 || !strings.Contains(resumed.Stdout, "finished") {
		t.Fatalf("same command after freeing space: want exit 0 and finished\n%s", resumed)
	}
	checkKept("after the resumed run")
	recs := w.api.Records(t)
	rows := w.Rows()
	if len(rows) != n {
		t.Fatalf("campaign holds %d rows, want %d", len(rows), n)
	}
	f := judge(t, rows, recs, false)
	f.lost += lost
	f.buckets = checkBuckets(t, recs, w.Claims(), lim)
	report(t, "storage", f, fmt.Sprintf("sent_before_full=%d stopped_after=%v exit=%d",
		len(sentBefore), stopped.Round(time.Millisecond), r.Code))
}

// fillDisk writes path until the file system has no byte left.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, chunk := range []int{1 << 20, 4096, 1} {
		buf := make([]byte, chunk)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("fill %s: %v", path, err)
				}
				break
			}
		}
	}
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
