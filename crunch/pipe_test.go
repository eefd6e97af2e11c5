package crunch

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestPipeSendWhile: batches arrive in order, each with the work done on
// it before it was taken; work runs while the user is busy and stops when
// it reports nothing left; a stopped user ends the producer. With queued
// batches, the first ones are queued without work while the user is busy,
// and the one after them gets the work.
func TestPipeSendWhile(t *testing.T) {
	for _, queued := range []int{0, 2} {
		type batch struct{ n, worked int }
		const batches = 50
		var worked atomic.Int64
		var took0 atomic.Bool // the user has taken batch 0
		p := startPipe(queued+3, queued, func(p *pipe[batch], b *batch) {
			for i := range batches {
				b.n, b.worked = i, 0
				if b = p.sendWhile(b, func() bool {
					b.worked++
					if b.n > 0 { // the work the user waits for, not batch 0's
						worked.Add(1)
					}
					return b.worked < 10
				}); b == nil {
					return
				}
				// Batches 1…queued are to find the queue empty: not
				// sent before the user has taken batch 0, which a slow
				// user (under the race detector, on a loaded machine)
				// had not, so that batch queued found the queue full.
				for i == 0 && !took0.Load() {
					runtime.Gosched()
				}
			}
			p.last(b)
		})
		next := 0
		for b := range p.full {
			if b.n == batches-1 {
				break // the last send's batch; p.last's follows
			}
			if b.n != next {
				t.Fatalf("queued %d: batch %d arrived for batch %d", queued, b.n, next)
			}
			if b.worked > 10 {
				t.Fatalf("queued %d: batch %d: work ran %d times after it reported nothing left", queued, b.n, b.worked)
			}
			if b.n >= 1 && b.n <= queued && b.worked != 0 {
				t.Fatalf("queued %d: batch %d was worked on though the queue had room", queued, b.n)
			}
			if b.n == queued+1 && b.worked == 0 {
				t.Fatalf("queued %d: batch %d: no work done while the user was busy with batch 0 and the queue full", queued, b.n)
			}
			if b.n == 0 {
				took0.Store(true)
				// Busy with batch 0 until the producer, which cannot hand
				// batch queued+1 on meanwhile, has worked on it.
				for deadline := time.Now().Add(10 * time.Second); worked.Load() == 0; runtime.Gosched() {
					if time.Now().After(deadline) {
						t.Fatalf("queued %d: the producer did no work while the user was busy", queued)
					}
				}
			}
			next++
			p.recycle(b)
		}
		p.stop() // the producer, blocked in last, must end
		if next != batches-1 {
			t.Fatalf("queued %d: %d batches in order, want %d", queued, next, batches-1)
		}
	}
}
