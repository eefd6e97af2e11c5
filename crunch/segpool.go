package crunch

import (
	"sync"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// segmentPool reads heap dump records split off by pass 1 on goroutines of
// its own, while pass 1 reads on; pass 1 merges them in file order.
type segmentPool struct {
	jobs  chan *segment
	queue []*segment // split off and not merged yet, in file order
	free  []*segment
	wg    sync.WaitGroup
}

// newSegmentPool starts n goroutines, with n+1 segments to fill: one more
// than they read at once, for pass 1 to split the next record into.
func newSegmentPool(n int, in *input) *segmentPool {
	sp := &segmentPool{jobs: make(chan *segment, n+1)}
	for range n + 1 {
		sp.free = append(sp.free, new(segment))
	}
	sp.wg.Add(n)
	for range n {
		go func() {
			defer sp.wg.Done()
			for sg := range sp.jobs {
				sg.readAll(in)
				close(sg.done)
			}
		}()
	}
	return sp
}

// stop ends the goroutines, once they have read what they were given.
func (sp *segmentPool) stop() {
	close(sp.jobs)
	sp.wg.Wait()
}

// split hands the current heap dump record to the pool, after merging the
// oldest one read if no segment is free.
func (p *pass1) split(rec hprof.Record) error {
	sp := p.pool
	if len(sp.free) == 0 {
		if err := p.mergeOldest(); err != nil {
			return err
		}
	}
	sg := sp.free[len(sp.free)-1]
	sp.free = sp.free[:len(sp.free)-1]
	sg.reset()
	if err := p.r.SplitHeapDump(&sg.r); err != nil {
		return err
	}
	sg.done, sg.start, sg.rec = make(chan struct{}), sg.r.Offset(), rec
	sp.queue = append(sp.queue, sg)
	sp.jobs <- sg
	return nil
}

// mergeOldest waits for the oldest record split off and merges it.
func (p *pass1) mergeOldest() error {
	sp := p.pool
	sg := sp.queue[0]
	<-sg.done
	sp.queue = append(sp.queue[:0], sp.queue[1:]...)
	sp.free = append(sp.free, sg)
	if err := p.merge(sg, true); err != nil {
		p.failed = true
		return err
	}
	p.addSpan(sg.rec, sg.start, sg.r.Offset(), sg.err, sg.clock)
	return nil
}

// drain merges every record split off, in order, stopping at an error.
func (p *pass1) drain() error {
	for p.pool != nil && len(p.pool.queue) > 0 {
		if err := p.mergeOldest(); err != nil {
			return err
		}
	}
	return nil
}

// readAll reads the whole record split off, a fault reading the mapped
// file being its error.
func (sg *segment) readAll(in *input) {
	defer guard()()
	defer in.catchFault(&sg.err)
	// Pieces of a 32 MiB record, say: the pages of the mapped file read
	// are given back as the reading goes on (a record split off is not
	// the main goroutine's to give back until it is merged). Those of a
	// smaller record (a JDK's are 1 MB) are left to the main goroutine,
	// which gives back releaseStep bytes at a time: each call costs the
	// other cores an interrupt to flush their TLBs.
	from := sg.start
	for sg.read(&sg.r, 1<<14, 0, nil) {
		if sg.r.Offset()-from >= releaseStep {
			from = in.dropRange(from, sg.r.Offset())
		}
	}
	if from > sg.start {
		in.dropRange(from, sg.r.Offset())
	}
}
