package store

import (
	"os"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/store/checkpoint"
)

// pageBlob fills about one 4 KiB page a row.
var pageBlob = make([]byte, 3500)

// writePages commits n transactions of rows rows each through the store's
// writer.
func writePages(t *testing.T, st *Store, n, rows int) {
	t.Helper()
	for range n {
		if err := st.write(t.Context(), func(tx *Tx) error {
			for range rows {
				if _, err := tx.ExecContext(t.Context(), `INSERT INTO scratch (b) VALUES (?)`, pageBlob); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// walFrames is how many frames the WAL of st holds (a PASSIVE checkpoint's
// count, which copies them too).
func walFrames(t *testing.T, st *Store) int64 {
	t.Helper()
	var busy, frames, copied int64
	if err := st.db.QueryRowContext(t.Context(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil {
		t.Fatal(err)
	}
	return frames
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// openScratch is a store without its Checkpointer (stopped), with a table
// to fill.
func openScratch(t *testing.T) *Store {
	t.Helper()
	st := openTest(t, newFakeClock())
	st.ckpt.Close()
	if err := st.write(t.Context(), func(tx *Tx) error {
		_, err := tx.ExecContext(t.Context(), `CREATE TABLE scratch (b BLOB)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return st
}

// A commit does not checkpoint: 3,000 pages past SQLite's 1,000, the
// database file has not grown; they are all in the WAL (issue 25: the
// receiver's group commit waited behind the applier's commit that
// checkpointed).
func TestCommitsDoNotCheckpoint(t *testing.T) {
	st := openScratch(t)
	before := fileSize(t, st.path)
	writePages(t, st, 100, 30)
	if after := fileSize(t, st.path); after != before {
		t.Errorf("database file %d bytes after the writes, %d before: a commit checkpointed", after, before)
	}
	if n := walFrames(t, st); n < 3000 {
		t.Errorf("WAL holds %d frames, want the 3,000 written", n)
	}
}

// With no Checkpointer running, the WAL still stays bounded: the writer
// checkpoints itself at WriterPragma's 10,000 pages, and the next write
// starts the WAL again.
func TestWALBoundedWithoutTheCheckpointer(t *testing.T) {
	st := openScratch(t)
	writePages(t, st, 500, 50) // 25,000 pages
	const frame = 4096 + 24
	if max, size := int64(10000+2*50+10)*frame, fileSize(t, st.path+"-wal"); size > max {
		t.Errorf("WAL file %d bytes, want at most %d (10,000 pages and a transaction)", size, max)
	}
}

// The Checkpointer copies a long WAL into the database and starts it
// again: a write after it makes a WAL of a few frames.
func TestCheckpointerStartsTheWALAgain(t *testing.T) {
	st := openScratch(t)
	before := fileSize(t, st.path)
	writePages(t, st, 100, 30)
	c := checkpoint.Start(st.db, &st.wmu, time.Hour, nil)
	c.Wrote()
	c.Close() // checkpoints what it was told of
	if after := fileSize(t, st.path); after < before+3000*4096 {
		t.Errorf("database file %d bytes after the checkpoint, %d before: the pages were not copied", after, before)
	}
	writePages(t, st, 1, 1)
	if n := walFrames(t, st); n > 5 {
		t.Errorf("WAL holds %d frames after one small write, want it started again", n)
	}
}

// gateClock tells the test how long the Checkpointer asks to wait, and
// fires when the test says.
type gateClock struct {
	asked chan time.Duration
	fire  chan time.Time
}

func (g gateClock) Now() time.Time { return time.Time{} }
func (g gateClock) After(d time.Duration) <-chan time.Time {
	g.asked <- d
	return g.fire
}

// The wait after a write doubles while checkpoints find few pages written
// (a process writing now and then), and is back to the shortest after one
// that found many.
func TestCheckpointerPacesItself(t *testing.T) {
	st := openScratch(t)
	clk := gateClock{asked: make(chan time.Duration), fire: make(chan time.Time)}
	const every = 10 * time.Millisecond
	c := checkpoint.Start(st.db, &st.wmu, every, clk)
	defer c.Close()
	for i, step := range []struct {
		pages int
		want  time.Duration // the wait this write is checkpointed after
	}{
		{1, every}, {1, 2 * every}, {checkpoint.Few + 50, 4 * every}, {1, every}, {1, 2 * every},
	} {
		// Told first and written while the Checkpointer waits for the
		// clock: a write racing the last checkpoint would make it find the
		// database busy and leave the wait as it was.
		c.Wrote()
		if got := <-clk.asked; got != step.want {
			t.Fatalf("write %d (%d pages): checkpointed after %v, want %v", i, step.pages, got, step.want)
		}
		writePages(t, st, 1, step.pages)
		clk.fire <- time.Time{}
	}
}

// The store tells its Checkpointer of every write: what it wrote reaches
// the database file, at the latest when the Checkpointer stops.
func TestStoreWritesAreCheckpointed(t *testing.T) {
	st := openTest(t, newFakeClock())
	if err := st.write(t.Context(), func(tx *Tx) error {
		_, err := tx.ExecContext(t.Context(), `CREATE TABLE scratch (b BLOB)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	before := fileSize(t, st.path)
	writePages(t, st, 30, 30)
	st.ckpt.Close()
	if after := fileSize(t, st.path); after < before+800*4096 {
		t.Errorf("database file %d bytes after 900 pages written, %d before: not checkpointed", after, before)
	}
}
