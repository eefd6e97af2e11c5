package cores

import (
	"errors"
	"runtime"
	"testing"
	"time"
)

// TestAlongside: with two cores Alongside runs f while the caller goes on
// (f here waits for the caller, and would never end run inline), and the
// wait returns f's error; with one core f runs only when the caller waits,
// after the caller's own work.
func TestAlongside(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	errF := errors.New("f's error")

	runtime.GOMAXPROCS(2)
	callerDone := make(chan struct{})
	wait := Alongside(func() error {
		select {
		case <-callerDone:
			return errF
		case <-time.After(10 * time.Second):
			return errors.New("the caller never went on")
		}
	})
	close(callerDone) // the caller's work, while f runs
	if err := wait(); err != errF {
		t.Errorf("two cores: wait returned %v, want %v", err, errF)
	}

	runtime.GOMAXPROCS(1)
	var order []string
	wait = Alongside(func() error { order = append(order, "f"); return errF })
	order = append(order, "caller")
	if err := wait(); err != errF {
		t.Errorf("one core: wait returned %v, want %v", err, errF)
	}
	if len(order) != 2 || order[0] != "caller" || order[1] != "f" {
		t.Errorf("one core: ran %v, want [caller f]", order)
	}
}

// TestLinger: Linger returns at once with one core; with two it lasts its
// time where no probe starts, and ends once one does (RoundTrip) or
// EndLinger is called.
func TestLinger(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer lingerOver.Store(lingerOver.Load())
	lingerOver.Store(false)
	timed := func(f func()) time.Duration {
		start := time.Now()
		f()
		return time.Since(start)
	}

	runtime.GOMAXPROCS(1)
	if d := timed(func() { Linger(10 * time.Second) }); d > 5*time.Second {
		t.Errorf("one core: Linger lasted %v, want no time", d)
	}

	runtime.GOMAXPROCS(2)
	if d := timed(func() { Linger(20 * time.Millisecond) }); d < 20*time.Millisecond {
		t.Errorf("two cores, no probe: Linger lasted %v, want 20 ms", d)
	}
	done := make(chan struct{})
	go func() {
		Linger(10 * time.Second)
		close(done)
	}()
	RoundTrip(time.Second, time.Second) // whatever it measures
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("two cores: Linger went on after a probe started")
	}

	lingerOver.Store(false)
	done = make(chan struct{})
	go func() {
		Linger(10 * time.Second)
		close(done)
	}()
	EndLinger()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("two cores: Linger went on after EndLinger")
	}
}
