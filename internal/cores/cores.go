// Package cores tells whether a second goroutine, on another core, pays
// for a pipeline that hands batches of data from one goroutine to the
// other (crunch's second pass, decrunch's second pass), and whether a
// run may split its passes' work with another core (SplitCores: crunch's
// passes by records and spans, which share little as they go).
//
// Such a pipeline pays only when the two cores share their data cheaply.
// On this project's 2-core VM the time a cache line takes to go to the
// other core and back (RoundTrip) falls into three bands, which decide
// which way is faster (docs/measurements.md: scripts/cores.sh at 4afff77 on
// a 134 MB dump, whole runs, two goroutines against one):
//
//   - 48-75 ns: the two cores share a cache; crunch 0.187-0.200 s against
//     0.239-0.264 s, decrunch 0.137-0.225 s against 0.228-0.235 s.
//   - 282-401 ns: they do not (an AMD EPYC's core complexes each have
//     their own L3 cache; where the host runs the virtual CPUs, the VM
//     cannot see); crunch 0.243-0.394 s against 0.249-0.273 s, decrunch
//     0.403-0.474 s against 0.232-0.243 s.
//   - no answer within the limits, or 1,000-1,900 ns: the other core is
//     busy with another program; one goroutine is faster, as above.
//
// Choose answers without it, for a pass that can time both ways as it
// goes (decrunch's second pass): the probe read the same with the other
// core free and busy in a state of 2026-11-27 (docs/measurements.md, "Decrunch times
// both ways").
//
// Pipeline, called once per pass, measures it, in about 0.1 ms (about
// startLimit + measureLimit at most: the limits are checked between spins),
// and answers for the pass. The limit
// between the bands, nearLimit, comes from this VM alone: phones were not
// measured.
package cores

import (
	"errors"
	"math"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
)

// nearLimit is the round trip under which two goroutines pay: between the
// bands measured (see the package comment).
const nearLimit = 150 * time.Nanosecond

// PipelineEnv names the environment variable that overrides Pipeline.
const PipelineEnv = "HEAPCRUNCH_PIPELINE"

// startLimit bounds the wait for the other goroutine to run at all: a
// thread that was idle, or one of a new process, can take milliseconds to
// start (on this VM 0.1 to 1 ms after seconds idle, up to 6 ms right after
// another process ended). measureLimit bounds the round trips once it
// runs: the other thread may stop for a while (1.5 ms seen, in one of 176
// round trips, which the median of the blocks leaves out), and a busy
// other core leaves it waiting for milliseconds again and again. With
// limits of 2 ms in all, start included, 48 of 166 probes of
// scripts/cores.sh ran out of time, most with the cores sharing a cache.
const (
	startLimit   = 10 * time.Millisecond
	measureLimit = 5 * time.Millisecond
)

// Probe is what Pipeline measures with; tests replace it.
var Probe = func() (time.Duration, error) { return RoundTrip(startLimit, measureLimit) }

// minObjects is the size of a pass under which Pipeline answers one
// goroutine without a probe: a second pass takes about 50 ns an object on
// one goroutine (13 ms for 1<<18), two save a quarter of it at best, and
// the probe can take 15 ms when the other core is busy.
const minObjects = 1 << 18

// Pipeline reports whether a pass over objects objects pays for a
// pipeline of two goroutines: there is more than one core for Go code
// (GOMAXPROCS), the pass has minObjects or more, and a cache line goes to
// another goroutine's thread and back in under nearLimit (Probe, Pays).
//
// The environment variable HEAPCRUNCH_PIPELINE overrides the size and the
// probe: "on" for two goroutines whenever GOMAXPROCS allows, "off" for
// one; any other value leaves the choice to them.
func Pipeline(objects uint64) bool {
	switch Choose(objects) {
	case Two:
		return true
	case Measure: // where Choose leaves it to timing, the probe decides
		return Pays(Probe())
	}
	return false
}

// Way is how a pass runs, as Choose says.
type Way int

// The ways of a pass.
const (
	One     Way = iota // on one goroutine
	Two                // on two
	Measure            // on both in turns, timed, then on the faster
)

// Choose says how a pass over objects objects runs, for a pass that can
// time both ways as it goes and go on with the faster (decrunch's second
// pass): One with GOMAXPROCS=1 or a pass of fewer than minObjects, else
// Measure, without a probe. The environment variable HEAPCRUNCH_PIPELINE
// overrides the size and the timing, as for Pipeline: "on" for Two
// whenever GOMAXPROCS allows, "off" for One.
func Choose(objects uint64) Way {
	if runtime.GOMAXPROCS(0) < 2 {
		return One
	}
	switch os.Getenv(PipelineEnv) {
	case "on":
		return Two
	case "off":
		return One
	}
	if objects < minObjects {
		return One
	}
	return Measure
}

// SplitEnv names the environment variable that overrides Split.
const SplitEnv = "HEAPCRUNCH_SPLIT"

// Split reports whether a pass over objects objects may split its work
// with goroutines on other cores, each working on data of its own
// (crunch's passes by records and spans): there is more than one core for
// Go code (GOMAXPROCS), and the pass has minObjects or more. How far the
// other core is, and whether it answers at all, is SplitCores's to say,
// once per run.
//
// The environment variable HEAPCRUNCH_SPLIT overrides the size: "on" for
// a split whenever GOMAXPROCS allows, "off" for none.
func Split(objects uint64) bool {
	if runtime.GOMAXPROCS(0) < 2 {
		return false
	}
	switch os.Getenv(SplitEnv) {
	case "on":
		return true
	case "off":
		return false
	}
	return objects >= minObjects
}

// Probed is what SplitCores finds of the other core.
type Probed int

// What SplitCores finds.
const (
	// NoSplit: one core for Go (GOMAXPROCS), or HEAPCRUNCH_SPLIT=off;
	// no probe is made, and the run does not split its passes.
	NoSplit Probed = iota
	// Unanswered: the probe got no answer in time (ErrNoStart, ErrSlow).
	// The run may split its passes where it does not wait long on the
	// other core (crunch's pass 2 takes over the spans the other is slow
	// to write).
	Unanswered
	// Far: the other core answered, in a round trip of nearLimit or
	// more; the cores do not share their data cheaply.
	Far
	// Near: the other core answered in under nearLimit (or
	// HEAPCRUNCH_SPLIT=on, without a probe).
	Near
)

// SplitCores says whether a run's passes may split their work with
// another core, and how far that core is (one probe, Probe; Pays): NoSplit
// where Split would not split a pass (GOMAXPROCS 1, HEAPCRUNCH_SPLIT=off),
// else Near, Far or Unanswered as the probe finds. HEAPCRUNCH_SPLIT=on
// answers Near without a probe.
//
// A probe that gets no answer does not mean that the other core is busy:
// a virtual machine's other core may stop for a while now and then. On
// the VM of 2026-12-02, with no other program running, 11 of 80 runs of
// crunch on the 134 MB dump saw their probe run out of time (after 8 to
// 27 ms), and 7 of the 11 second probes answered; where both cores are
// busy the probe gets no answer, and where one other program keeps the
// other core busy it mostly answers all the same. So SplitCores makes one
// probe, and a run it leaves Unanswered measures the cores it has as it
// goes, as crunch's pass 1 does for every split (until 2026-12-03 such a
// run read its dump on one core in both passes, after a second probe).
//
// A split where the other core is busy costs more than it saves: crunch
// of the 134 MB dump with a shell loop on the other core, its input read
// at offsets (2026-12-02, 6 alternating runs): 0.56 s against 0.39 s on
// one goroutine (docs/measurements.md, "Read at offsets"). Crunch maps
// its input where the other core answers, Near or Far, and reading the
// file mapped pays, which crunch measures for the file itself (with the
// cores near, since 2026-12-05, only where the page cache maps it 2 MiB
// at a time: crunch's wayOf). Where mapped pages cost three
// times as much (the VM of 2026-12-02, its cores 430 ns apart, the 134 MB
// dump of a 32-bit JVM, three runs each), crunch mapped took 0.42 to 0.45
// s with one core, 0.31 to 0.37 s with two, 0.48 to 0.51 s with the other
// core busy; read through a buffer 0.29 to 0.30, 0.30 to 0.33 and 0.30 to
// 0.36 s (docs/measurements.md, "Mapped or read"). Where the cores shared
// a cache, the mapped dump split on two took 0.19 s (2026-11-28); where
// mapped pages are cheap and the cores far (the Zen 4 VM of 2026-12-04,
// about 330 ns), 138.2 against 155.2 ms read at offsets
// (docs/measurements.md, "Mapped where the cores are far").
func SplitCores() Probed {
	if !Split(math.MaxUint64) {
		return NoSplit
	}
	if os.Getenv(SplitEnv) == "on" {
		return Near
	}
	switch rt, err := Probe(); {
	case err != nil:
		return Unanswered
	case Pays(rt, err):
		return Near
	}
	return Far
}

// Pays reports whether a probe's result says that two goroutines pay: a
// round trip measured, above zero (a clock too coarse to measure one
// says nothing), and under nearLimit.
func Pays(rt time.Duration, err error) bool {
	return err == nil && rt > 0 && rt < nearLimit
}

// paddedCounter is a counter alone on its cache line.
type paddedCounter struct {
	_ [64]byte
	atomic.Uint64
	_ [56]byte
}

// warmTrips and blockTrips: the round trips before the timed ones (the
// other goroutine starting, the line settling), and the timed ones, in
// blocks of which the median is kept, so that an interrupt in one block
// does not count.
const (
	warmTrips  = 16
	blockTrips = 32
	blocks     = 5
)

// Errors of RoundTrip: the other goroutine did not answer in time.
var (
	ErrNoStart = errors.New("cores: the other goroutine did not start in time")
	ErrSlow    = errors.New("cores: the round trips took too long")
)

// RoundTrip returns the time a cache line takes to go from this
// goroutine's thread to another goroutine's and back, both spinning: the
// median of a few blocks of round trips. It fails with ErrNoStart if the
// other goroutine does not answer within start, with ErrSlow if the round
// trips take more than limit in all (the other goroutine ran slowly).
// With GOMAXPROCS=1 the other goroutine runs only when this one is
// preempted: it fails. Both goroutines call time.Now every 1024 spins, so
// that the runtime can stop them for a garbage collection even without
// asynchronous preemption, and the other one gives up by itself after
// start + limit.
func RoundTrip(start, limit time.Duration) (time.Duration, error) {
	lingerOver.Store(true) // ends Linger

	var c paddedCounter // odd: the other goroutine's turn to add one; even: ours
	var stop atomic.Bool
	giveUp := time.Now().Add(start + limit)
	go func() {
		for want := uint64(1); ; want += 2 {
			for spins := 0; c.Load() != want; spins++ {
				if spins%1024 == 1023 && (stop.Load() || time.Now().After(giveUp)) {
					return
				}
			}
			c.Store(want + 1)
		}
	}()
	defer stop.Store(true)
	turn := uint64(0) // c's value when it is this goroutine's turn
	// trips makes n round trips, or reports false at the deadline.
	deadline := time.Now().Add(start)
	trips := func(n int) bool {
		for range n {
			c.Store(turn + 1)
			turn += 2
			for spins := 0; c.Load() != turn; spins++ {
				if spins%1024 == 1023 && time.Now().After(deadline) {
					return false
				}
			}
		}
		return true
	}
	if !trips(1) { // the other goroutine running
		return 0, ErrNoStart
	}
	deadline = time.Now().Add(limit)
	if !trips(warmTrips) {
		return 0, ErrSlow
	}
	var times [blocks]time.Duration
	for i := range times {
		t := time.Now()
		if !trips(blockTrips) {
			return 0, ErrSlow
		}
		times[i] = time.Since(t) / blockTrips
	}
	return median(times[:]), nil
}

// lingerOver is set once a probe of the cores (RoundTrip) has started in
// the process, or the program knows that none comes (EndLinger); it ends
// Linger.
var lingerOver atomic.Bool

// EndLinger ends Linger, for a program that will not probe the cores
// after all: crunch of a dump it reads through a buffer (a file under 16
// MiB, a reader that is not a file), without a probe. Lingering on, the
// goroutine would keep the other core busy for nothing: crunch of the
// corpus's 3.7 MB dialer dump took 35.0 ms and 40.5 ms of processor time
// lingering its 5 ms, 33.1 and 34.7 ms ending it (medians of 25
// alternating runs, 2026-12-05).
func EndLinger() { lingerOver.Store(true) }

// Linger keeps its goroutine running, giving way to any other goroutine at
// each turn (runtime.Gosched), until a probe of the cores (RoundTrip)
// starts, EndLinger is called or d passes, where Go has two cores or more;
// with one it returns at once. A program that probes the cores soon after
// it starts runs it on a goroutine of its own: the probe's second
// goroutine then starts on a thread that runs, where it would otherwise
// wait for the system to wake an idle one, which on this project's VM took
// 0.04 to 0.65 ms in 24 runs of crunch of 30 and 0.9 to 7.4 ms in 6
// (crunch's cmd/crunch lingers after the heap's advice;
// docs/measurements.md, "Idle cores, fresh pages at pass 1's start, and a
// thread kept awake for the probe").
func Linger(d time.Duration) {
	if runtime.GOMAXPROCS(0) < 2 {
		return
	}
	for end := time.Now().Add(d); !lingerOver.Load() && time.Now().Before(end); {
		runtime.Gosched()
	}
}

// median returns the median of d (sorted in place).
func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// Alongside starts f on a goroutine of its own, where the process has more
// than one core for Go code (GOMAXPROCS), and returns a function that
// waits for f to end and returns its error. With one core, f runs in
// that function instead, when the caller waits for it: the caller's work
// and f's run one after the other, in the caller's order.
func Alongside(f func() error) (wait func() error) {
	if runtime.GOMAXPROCS(0) < 2 {
		return f
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	return func() error { return <-done }
}
