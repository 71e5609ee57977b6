package recipients

import "sync"

// chunkRecords is how many records travel through a Pipeline together:
// enough that channel operations cost nothing per row, few enough that the
// chunks in flight stay well under a megabyte.
const chunkRecords = 256

// Pipeline yields a Reader's rows, made on several goroutines: one reads
// and splits the CSV, workers normalise numbers and check parameters, and
// Next hands the rows out in file order. Bounded queues between them keep
// memory flat however large the file is.
//
// A Pipeline is not safe for concurrent use; it owns its Reader until
// Close returns.
type Pipeline struct {
	rd    *Reader
	order chan *chunk // every chunk, in file order, as soon as it is read
	// free are chunks Next is done with, for the reader to fill again: a
	// chunk's slices are most of what reading allocates, and allocating
	// them anew made the collector run twice as often.
	free chan *chunk
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
	cur  *chunk
	next int // cur's next record
}

// chunk is a run of consecutive records and, once done is closed, the rows
// made from them.
type chunk struct {
	fields []string // the records' fields, one record after another
	ends   []int    // record i's fields end at ends[i] in fields
	lines  []int
	// err follows the records: io.EOF after the last one, or the fatal
	// error that ended reading; nil when more chunks follow.
	err  error
	rows []Row
	errs []error // *RowError for a record that is not a usable row
	done chan struct{}
}

// Parallel reads rd with workers goroutines making rows (at least one).
// Rows, row errors and the final error (io.EOF or a fatal one) come out of
// Next exactly as they would from rd.Next, in the same order; duplicates
// are found in file order when rd was opened with FindDuplicates.
func Parallel(rd *Reader, workers int) *Pipeline {
	workers = max(workers, 1)
	p := &Pipeline{
		rd: rd,
		// The reader may run this many chunks ahead of Next.
		order: make(chan *chunk, 2*workers),
		free:  make(chan *chunk, 3*workers+2), // every chunk that can be in flight
		stop:  make(chan struct{}),
	}
	work := make(chan *chunk, workers)
	p.wg.Add(1 + workers)
	go p.read(work)
	for range workers {
		go p.work(work)
	}
	return p
}

func (p *Pipeline) read(work chan<- *chunk) {
	defer p.wg.Done()
	defer close(work)
	for {
		var c *chunk
		select {
		case c = <-p.free:
			c.done = make(chan struct{})
		default:
			c = &chunk{
				fields: make([]string, 0, chunkRecords*(len(p.rd.header)+1)),
				ends:   make([]int, 0, chunkRecords),
				lines:  make([]int, 0, chunkRecords),
				rows:   make([]Row, chunkRecords),
				errs:   make([]error, chunkRecords),
				done:   make(chan struct{}),
			}
		}
		for len(c.lines) < chunkRecords {
			rec, line, err := p.rd.record()
			if err != nil {
				c.err = err
				break
			}
			c.fields = append(c.fields, rec...)
			c.ends = append(c.ends, len(c.fields))
			c.lines = append(c.lines, line)
		}
		// order first: a worker may finish c before Next looks for it,
		// never the other way round.
		select {
		case p.order <- c:
		case <-p.stop:
			return
		}
		select {
		case work <- c:
		case <-p.stop:
			return
		}
		if c.err != nil {
			return
		}
	}
}

func (p *Pipeline) work(work <-chan *chunk) {
	defer p.wg.Done()
	for c := range work {
		c.rows, c.errs = c.rows[:len(c.lines)], c.errs[:len(c.lines)]
		start := 0
		for i, end := range c.ends {
			c.rows[i], c.errs[i] = p.rd.row(c.fields[start:end], c.lines[i])
			start = end
		}
		clear(c.fields) // let the records' strings go with their rows
		c.fields = c.fields[:0]
		close(c.done)
	}
}

// Next returns the next usable row, or io.EOF after the last one, like
// Reader.Next: a *RowError is a record that cannot be used (call Next
// again), any other error is fatal and comes back from every later call.
// It must not be called after Close.
func (p *Pipeline) Next() (Row, error) {
	for {
		if c := p.cur; c != nil {
			if i := p.next; i < len(c.lines) {
				p.next++
				row, err := c.rows[i], c.errs[i]
				c.rows[i], c.errs[i] = Row{}, nil // let the chunk's strings go as they are used
				if err != nil {
					return Row{}, err
				}
				p.rd.markDuplicate(&row)
				return row, nil
			}
			if c.err != nil {
				return Row{}, c.err
			}
			p.recycle(c)
		}
		c := <-p.order
		<-c.done
		p.cur, p.next = c, 0
	}
}

// recycle hands c, whose rows Next has all given out, back to the reader.
func (p *Pipeline) recycle(c *chunk) {
	c.ends, c.lines = c.ends[:0], c.lines[:0]
	c.rows, c.errs = c.rows[:0], c.errs[:0]
	select {
	case p.free <- c:
	default: // cannot happen while free holds every chunk in flight; drop it if it does
	}
}

// Close stops the goroutines and waits for them, so the Reader and the
// file under it are the caller's again. It may be called more than once.
func (p *Pipeline) Close() {
	p.once.Do(func() {
		close(p.stop)
		p.wg.Wait()
	})
}
