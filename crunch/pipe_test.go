package crunch

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestPipeSendWhile: batches arrive in order, each with the work done on
// it before it was taken; work runs while the user is busy and stops when
// it reports nothing left; a stopped user ends the producer.
func TestPipeSendWhile(t *testing.T) {
	type batch struct{ n, worked int }
	const batches = 50
	var worked atomic.Int64
	p := startPipe(3, func(p *pipe[batch], b *batch) {
		for i := range batches {
			b.n, b.worked = i, 0
			if b = p.sendWhile(b, func() bool {
				b.worked++
				worked.Add(1)
				return b.worked < 10
			}); b == nil {
				return
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
			t.Fatalf("batch %d arrived for batch %d", b.n, next)
		}
		if b.worked > 10 {
			t.Fatalf("batch %d: work ran %d times after it reported nothing left", b.n, b.worked)
		}
		if b.n == 1 && b.worked == 0 {
			t.Fatal("batch 1: no work done while the user was busy with batch 0")
		}
		if b.n == 0 {
			// Busy with batch 0 until the producer, which cannot hand
			// batch 1 on meanwhile, has worked on it.
			for deadline := time.Now().Add(10 * time.Second); worked.Load() == 0; runtime.Gosched() {
				if time.Now().After(deadline) {
					t.Fatal("the producer did no work while the user was busy")
				}
			}
		}
		next++
		p.recycle(b)
	}
	p.stop() // the producer, blocked in last, must end
	if next != batches-1 {
		t.Fatalf("%d batches in order, want %d", next, batches-1)
	}
}
