// Package checkpoint copies a SQLite database's write-ahead log back into
// the database file on a connection of its own, off the writers' path.
//
// SQLite checkpoints in the connection whose commit takes the WAL past
// wal_autocheckpoint pages (1,000): that commit returns only once the
// pages are copied and both files synced, tens to hundreds of
// milliseconds later. wasend's writes of one process queue on one mutex,
// so every write behind that commit waited too: a webhook receiver's group
// commit sat 212 ms behind the applier's commit that checkpointed for
// 184 ms, and its posts' answers with it (issue 25, WASEND_TRACE_SLOW).
// Worse, while two processes write without a pause, no write begins with
// the WAL copied whole, which is when SQLite starts it again from its
// beginning: the WAL stays past the 1,000 pages and every commit
// checkpoints.
//
// As litestream does, the writer's own checkpoint is off (WriterPragma)
// and a Checkpointer runs PASSIVE checkpoints beside it, which never wait
// for a lock nor hold one a writer or a reader needs. Writes come while
// one copies, so once the WAL is long (RestartAt) it copies again what
// came meanwhile, each time less, and when that is a few pages it copies
// the last of them in a RESTART checkpoint with this process's writes held:
// that one holds the write lock for a few milliseconds and, when no
// reader is left on the old frames, makes the next write start the WAL
// again. A
// process that writes little checkpoints less often (Few, Slowest).
package checkpoint

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"fmt"
	"sync"
	"time"

	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/slowtrace"
)

// Every is how long after a write the Checkpointer checkpoints: under
// continuous writes, a checkpoint every 200 ms and the time it takes. At
// the webhook receiver's 5,000 posts/s beside a sending campaign, about
// the 1,000 pages SQLite would checkpoint at.
const Every = 200 * time.Millisecond

// A checkpoint that found fewer than Few pages written since the last one
// doubles the wait after the next write, up to Slowest: a process that
// writes now and then syncs the files once a second, not five times
// (SQLite's 1,000 pages took it minutes). One that found more brings the
// wait back to Every. Slowest is short enough that a burst after a quiet
// spell (5,000 pages a second at the receiver's target) reaches its first
// checkpoint before the writer's own bound.
const (
	Few     = 200
	Slowest = time.Second
)

// WriterPragma is what the writer connection runs: no checkpoint of its
// own unless the WAL has reached 10,000 pages (40 MiB) because the
// Checkpointer could not start it again (a bound, never the rule). The
// setting is the connection's: others keep SQLite's default.
const WriterPragma = `PRAGMA wal_autocheckpoint = 10000`

// RestartAt is how many pages in the WAL make the Checkpointer start it
// again (8 MiB of 4 KiB pages).
const RestartAt = 2000

// Held is how many pages that came during a checkpoint are few enough to
// copy with the writes held.
const Held = 200

// The RESTART checkpoint does not wait for another process's write nor
// for readers (its connection's busy timeout is 0): with one under way it
// copies as PASSIVE does or leaves the WAL as it is, and a later one
// starts it again. Waiting held every writer: with 20 ms to wait, some
// took 40-75 ms (bench/webhook.sh at load 9).

// Checkpointer checkpoints one database's WAL a while after it was
// written.
type Checkpointer struct {
	db    *sql.DB
	lock  sync.Locker // held by this process's writers
	every time.Duration
	clock clock.Clock
	conn  *sql.Conn     // its own, with no busy timeout; run's alone
	wait  time.Duration // after the next write; run's alone
	last  int64         // the WAL's frames at the last checkpoint; run's alone
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// Start starts a Checkpointer of db that checkpoints every after a write
// (0: Every) on clk (nil: the wall clock); lock is what this process's
// writers hold while they write.
func Start(db *sql.DB, lock sync.Locker, every time.Duration, clk clock.Clock) *Checkpointer {
	if every <= 0 {
		every = Every
	}
	if clk == nil {
		clk = clock.Real{}
	}
	c := &Checkpointer{db: db, lock: lock, every: every, wait: every, clock: clk,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// Wrote tells c a write transaction ended. It never blocks.
func (c *Checkpointer) Wrote() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Close stops c; a write it was told of is checkpointed first.
func (c *Checkpointer) Close() {
	c.once.Do(func() { close(c.stop) })
	<-c.done
}

func (c *Checkpointer) run() {
	defer close(c.done)
	defer c.drop()
	for {
		select {
		case <-c.kick:
		case <-c.stop:
			select {
			case <-c.kick: // told before the stop
				c.checkpoint()
			default:
			}
			return
		}
		select {
		case <-c.clock.After(c.wait):
		case <-c.stop:
		}
		c.checkpoint()
	}
}

// checkpoint copies what it can: a checkpoint that finds another one
// under way (another process's) or readers on frames it needs leaves them
// to the next. A long WAL copied whole is started again (see the package
// comment).
func (c *Checkpointer) checkpoint() {
	frames, copied := c.run1("PASSIVE")
	if frames < 0 {
		return // not run (another process's under way): the next will
	}
	c.pace(frames)
	defer func() { c.last = max(frames, 0) }()
	if frames < RestartAt || copied != frames {
		return
	}
	for range 3 {
		was := frames
		if frames, copied = c.run1("PASSIVE"); frames < 0 || copied != frames {
			return // readers hold frames: the WAL can't start again now
		}
		if frames-was <= Held {
			c.lock.Lock()
			defer c.lock.Unlock()
			c.run1("RESTART")
			return
		}
	}
}

// pace sets the wait after the next write from the pages written since
// the last checkpoint (all of the WAL's when it started again meanwhile).
func (c *Checkpointer) pace(frames int64) {
	written := frames - c.last
	if frames < c.last {
		written = frames
	}
	if written < Few {
		c.wait = min(2*c.wait, max(Slowest, c.every))
	} else {
		c.wait = c.every
	}
}

// run1 runs one checkpoint of mode: the WAL's frames, and how many of
// them are in the database now (-1, -1 when it could not run).
func (c *Checkpointer) run1(mode string) (frames, copied int64) {
	frames, copied = -1, -1
	ctx := context.Background()
	if c.conn == nil {
		conn, err := c.db.Conn(ctx)
		if err != nil {
			return
		}
		if _, err := conn.ExecContext(ctx, `PRAGMA busy_timeout = 0`); err != nil {
			conn.Close()
			return
		}
		c.conn = conn
	}
	sp := slowtrace.Start()
	var busy int64
	err := c.conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(`+mode+`)`).Scan(&busy, &frames, &copied)
	sp.End("checkpoint "+mode, "frames", frames, "copied", copied, "busy", busy, "err", fmt.Sprint(err))
	if err != nil {
		c.drop() // the next gets a fresh connection
	}
	if err != nil || busy != 0 {
		return -1, -1
	}
	return frames, copied
}

// drop discards c's connection: without a busy timeout, it must not go
// back to the pool.
func (c *Checkpointer) drop() {
	if c.conn != nil {
		c.conn.Raw(func(any) error { return sqldriver.ErrBadConn })
		c.conn.Close()
		c.conn = nil
	}
}
