package crunch

// pipe carries batches from a reading goroutine to the goroutine that uses
// them, in order, and back for reuse: the reading runs ahead by at most a
// few batches, and both passes use the second core for it.
//
//	p := startPipe(5, 2, func(p *pipe[T], b *T) { ...; b = p.send(b) ...; p.last(b) })
//	defer p.stop()
//	for b := range p.full {
//		...
//		p.recycle(b)
//	}
type pipe[B any] struct {
	full     chan *B       // batches filled, in order; closed after the last
	free     chan *B       // batches to fill again
	done     chan struct{} // closed when the user stops
	finished chan struct{} // closed when the reading goroutine has returned
}

// startPipe makes batches empty batches and runs produce on another
// goroutine with the first of them. produce hands each filled batch on
// with send, which returns the next one to fill (nil once the user has
// stopped: produce must then return), and its last one with last. Up to
// queued batches wait for the user, filled, beyond the one it takes
// next: the slack that keeps either side from waiting for the other when
// the cost of batches varies (batches must exceed queued + 2).
func startPipe[B any](batches, queued int, produce func(p *pipe[B], b *B)) *pipe[B] {
	p := &pipe[B]{full: make(chan *B, queued), free: make(chan *B, batches), done: make(chan struct{}), finished: make(chan struct{})}
	for range batches {
		p.free <- new(B)
	}
	go func() {
		defer close(p.finished)
		defer close(p.full)
		produce(p, <-p.free)
	}()
	return p
}

// send hands b on and returns an empty batch (not reset: the caller
// resets it), or nil if the user has stopped.
func (p *pipe[B]) send(b *B) *B {
	select {
	case p.full <- b:
	case <-p.done:
		return nil
	}
	return p.next()
}

// sendWhile is send, calling work while the user is busy with the
// batches before b: until b is taken, or queued when there is room, or
// work reports it has nothing left to do. work runs before b is handed
// on, so it may change b.
func (p *pipe[B]) sendWhile(b *B, work func() bool) *B {
	for {
		select {
		case p.full <- b:
			return p.next()
		case <-p.done:
			return nil
		default:
		}
		if !work() {
			return p.send(b)
		}
	}
}

// next returns an empty batch, or nil if the user has stopped.
func (p *pipe[B]) next() *B {
	select {
	case b := <-p.free:
		return b
	case <-p.done:
		return nil
	}
}

// last hands on the last batch, unless the user has stopped.
func (p *pipe[B]) last(b *B) {
	select {
	case p.full <- b:
	case <-p.done:
	}
}

// recycle gives a used batch back to fill again; it never blocks.
func (p *pipe[B]) recycle(b *B) { p.free <- b }

// stop ends the use: the reading goroutine stops at its next send and is
// waited for.
func (p *pipe[B]) stop() {
	close(p.done)
	<-p.finished
}
