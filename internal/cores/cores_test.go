package cores

import (
	"runtime"
	"testing"
	"time"
)

// goroutinesBack waits until the goroutines are no more than n again, and
// reports whether they are.
func goroutinesBack(n int) bool {
	for range 200 {
		if runtime.NumGoroutine() <= n {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// TestRoundTripOneCore: with one core the other goroutine cannot answer
// while this one spins: RoundTrip gives up at its limits, and the other
// goroutine ends.
func TestRoundTripOneCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	n := runtime.NumGoroutine()
	start := time.Now()
	rt, err := RoundTrip(5*time.Millisecond, 5*time.Millisecond)
	took := time.Since(start)
	// ErrNoStart, or ErrSlow when this goroutine was preempted before
	// it saw the start's deadline pass: then each round trip waits for
	// a preemption.
	if err != ErrNoStart && err != ErrSlow {
		t.Errorf("GOMAXPROCS=1: round trip %v, error %v; want %v or %v", rt, err, ErrNoStart, ErrSlow)
	}
	// The spinning is preempted every 10 ms or so: the limit is checked
	// when this goroutine runs.
	if took > time.Second {
		t.Errorf("GOMAXPROCS=1: RoundTrip took %v with limits of 5 ms", took)
	}
	if !goroutinesBack(n) {
		t.Errorf("the other goroutine did not end: %d goroutines, %d before", runtime.NumGoroutine(), n)
	}
}

// TestRoundTrip: with two cores, a round trip measured is some
// nanoseconds, not zero, and within the limit; the other goroutine ends.
// (Whether it is measured at all depends on the other core being free:
// other tests may keep it busy.)
func TestRoundTrip(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	n := runtime.NumGoroutine()
	const limit = 50 * time.Millisecond
	rt, err := RoundTrip(limit, limit)
	t.Logf("round trip %v, error %v", rt, err)
	switch {
	case err == nil && (rt <= 0 || rt > limit):
		t.Errorf("round trip %v, want between 0 and %v", rt, limit)
	case err != nil && err != ErrNoStart && err != ErrSlow:
		t.Errorf("error %v, want %v or %v", err, ErrNoStart, ErrSlow)
	}
	if !goroutinesBack(n) {
		t.Errorf("the other goroutine did not end: %d goroutines, %d before", runtime.NumGoroutine(), n)
	}
}

// TestPipeline: two goroutines pay only with more than one core, for a
// pass of minObjects or more, with a round trip measured under nearLimit,
// probed once.
func TestPipeline(t *testing.T) {
	t.Setenv(PipelineEnv, "")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer func(p func() (time.Duration, error)) { Probe = p }(Probe)
	type probe struct {
		rt time.Duration
		ok bool
	}
	for _, c := range []struct {
		procs  int
		probes []probe // what the probes measure, in turn
		want   bool
		calls  int
	}{
		{1, []probe{{50, true}}, false, 0},
		{2, []probe{{50, true}}, true, 1},
		{8, []probe{{149, true}}, true, 1},
		{2, []probe{{150, true}}, false, 1},
		{2, []probe{{350, true}}, false, 1},
		{2, []probe{{0, false}, {60, true}}, false, 1},
		{2, []probe{{0, true}}, false, 1},
	} {
		runtime.GOMAXPROCS(c.procs)
		calls := 0
		Probe = func() (time.Duration, error) {
			p := c.probes[min(calls, len(c.probes)-1)]
			calls++
			if !p.ok {
				return 0, ErrSlow
			}
			return p.rt * time.Nanosecond, nil
		}
		if got := Pipeline(minObjects); got != c.want || calls != c.calls {
			t.Errorf("GOMAXPROCS=%d, probes %v: Pipeline %v after %d probes, want %v after %d", c.procs, c.probes, got, calls, c.want, c.calls)
		}
	}
}

// TestSmallPass: a pass of fewer than minObjects runs on one goroutine,
// without a probe, unless HEAPCRUNCH_PIPELINE=on.
func TestSmallPass(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	defer func(p func() (time.Duration, error)) { Probe = p }(Probe)
	probed := false
	Probe = func() (time.Duration, error) { probed = true; return 50 * time.Nanosecond, nil }
	t.Setenv(PipelineEnv, "")
	if Pipeline(minObjects-1) || probed {
		t.Errorf("%d objects: two goroutines, or probed (%v)", minObjects-1, probed)
	}
	t.Setenv(PipelineEnv, "on")
	if !Pipeline(1) {
		t.Errorf("%s=on, 1 object: one goroutine", PipelineEnv)
	}
}

// TestPipelineEnv: HEAPCRUNCH_PIPELINE=on or off decides without a
// probe, but never two goroutines with one core; any other value probes.
func TestPipelineEnv(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer func(p func() (time.Duration, error)) { Probe = p }(Probe)
	for _, c := range []struct {
		env    string
		procs  int
		want   bool
		probed bool
	}{
		{"on", 2, true, false},
		{"on", 1, false, false},
		{"off", 2, false, false},
		{"auto", 2, true, true},
		{"", 2, true, true},
	} {
		t.Setenv(PipelineEnv, c.env)
		runtime.GOMAXPROCS(c.procs)
		probed := false
		Probe = func() (time.Duration, error) { probed = true; return 50 * time.Nanosecond, nil }
		if got := Pipeline(minObjects); got != c.want || probed != c.probed {
			t.Errorf("%s=%q, GOMAXPROCS=%d: Pipeline %v, probed %v; want %v, %v", PipelineEnv, c.env, c.procs, got, probed, c.want, c.probed)
		}
	}
}

func TestMedian(t *testing.T) {
	d := []time.Duration{9, 1, 7, 3, 5}
	if m := median(d); m != 5 {
		t.Errorf("median %v, want 5", m)
	}
}

// BenchmarkPipeline: what deciding costs a large pass.
func BenchmarkPipeline(b *testing.B) {
	for b.Loop() {
		Pipeline(minObjects)
	}
}

// TestSplit: a pass splits its work with another core when Go has two or
// more and the pass has minObjects or more, without a probe, whatever the
// other core's answer would be. HEAPCRUNCH_SPLIT=on or off decides,
// within GOMAXPROCS.
func TestSplit(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer func(p func() (time.Duration, error)) { Probe = p }(Probe)
	Probe = func() (time.Duration, error) {
		t.Error("Split probed the cores")
		return 0, ErrNoStart
	}
	for _, c := range []struct {
		env     string
		procs   int
		objects uint64
		want    bool
	}{
		{"", 1, minObjects, false},
		{"", 2, minObjects, true},
		{"", 4, minObjects, true},
		{"", 2, minObjects - 1, false},
		{"on", 2, 1, true},
		{"on", 1, minObjects, false},
		{"off", 2, minObjects, false},
	} {
		t.Setenv(SplitEnv, c.env)
		runtime.GOMAXPROCS(c.procs)
		if got := Split(c.objects); got != c.want {
			t.Errorf("%s=%q, GOMAXPROCS=%d, %d objects: Split %v, want %v", SplitEnv, c.env, c.procs, c.objects, got, c.want)
		}
	}
}

// TestChoose: a pass of minObjects or more with two cores is timed
// (Measure), without a probe; one core, a smaller pass or
// HEAPCRUNCH_PIPELINE=off run on one goroutine, "on" on two.
func TestChoose(t *testing.T) {
	defer func(p func() (time.Duration, error)) { Probe = p }(Probe)
	Probe = func() (time.Duration, error) {
		t.Error("Choose probed")
		return 0, nil
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, c := range []struct {
		procs   int
		env     string
		objects uint64
		want    Way
	}{
		{2, "", minObjects, Measure},
		{2, "", minObjects - 1, One},
		{1, "", minObjects, One},
		{2, "on", 1, Two},
		{1, "on", minObjects, One},
		{2, "off", minObjects, One},
		{2, "maybe", minObjects, Measure},
	} {
		runtime.GOMAXPROCS(c.procs)
		t.Setenv(PipelineEnv, c.env)
		if got := Choose(c.objects); got != c.want {
			t.Errorf("GOMAXPROCS=%d, %s=%q, %d objects: %v, want %v", c.procs, PipelineEnv, c.env, c.objects, got, c.want)
		}
	}
}

// TestSplitCores: a run may split its passes where Split would split a
// pass, after one probe: Near (a round trip under nearLimit), Far, or
// Unanswered when the probe fails, which is not made again; NoSplit,
// without a probe, with one core or HEAPCRUNCH_SPLIT=off;
// HEAPCRUNCH_SPLIT=on gives Near without a probe, within GOMAXPROCS.
func TestSplitCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer func(p func() (time.Duration, error)) { Probe = p }(Probe)
	type probe struct {
		rt  time.Duration
		err error
	}
	near, far := probe{60 * time.Nanosecond, nil}, probe{430 * time.Nanosecond, nil}
	for _, c := range []struct {
		env    string
		procs  int
		probes []probe // what the probes answer, in turn; as many as are made
		want   Probed
	}{
		{"", 2, []probe{near}, Near},
		{"", 4, []probe{near}, Near},
		{"", 2, []probe{far}, Far},
		{"", 2, []probe{{149 * time.Nanosecond, nil}}, Near},
		{"", 2, []probe{{150 * time.Nanosecond, nil}}, Far},
		{"", 2, []probe{{0, nil}}, Far}, // a clock too coarse: answered, not near
		{"", 2, []probe{{0, ErrNoStart}}, Unanswered},
		{"", 2, []probe{{0, ErrSlow}}, Unanswered},
		{"", 1, nil, NoSplit},
		{"on", 2, nil, Near},
		{"on", 1, nil, NoSplit},
		{"off", 2, nil, NoSplit},
	} {
		made := 0
		Probe = func() (time.Duration, error) {
			made++
			if made > len(c.probes) {
				return near.rt, nil // a second probe would answer
			}
			return c.probes[made-1].rt, c.probes[made-1].err
		}
		t.Setenv(SplitEnv, c.env)
		runtime.GOMAXPROCS(c.procs)
		if got := SplitCores(); got != c.want || made != len(c.probes) {
			t.Errorf("%s=%q, GOMAXPROCS=%d, probes answering %v: SplitCores %v after %d probes; want %v after %d",
				SplitEnv, c.env, c.procs, c.probes, got, made, c.want, len(c.probes))
		}
	}
}
