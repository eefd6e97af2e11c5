package decrunch

import (
	"path/filepath"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// threadRoots returns the thread serials of a dump's ROOT THREAD OBJECT
// records, and those that its other roots name (JNI LOCAL, JAVA FRAME, JNI
// MONITOR, NATIVE STACK, THREAD BLOCK), with how many roots name each.
func threadRoots(t *testing.T, data []byte) (threads map[uint32]bool, named map[uint32]int) {
	t.Helper()
	threads, named = map[uint32]bool{}, map[uint32]int{}
	err := heapstat.Walk(data, func(_ hprof.Record, _ *hprof.Reader, s *hprof.SubRecord) error {
		switch {
		case s == nil:
		case s.Tag == hprof.SubRootThreadObject:
			threads[s.Thread] = true
		case s.Tag == hprof.SubRootJNILocal, s.Tag == hprof.SubRootJavaFrame, s.Tag == hprof.SubRootJNIMonitor,
			s.Tag == hprof.SubRootNativeStack, s.Tag == hprof.SubRootThreadBlock:
			named[s.Thread]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return threads, named
}

// TestDropHeapKeepsThreads: with --drop-heap zygote,image the dialer
// dump's main thread object (serial 1, in the zygote heap) is left out,
// but 23 JAVA FRAME and 4 JNI LOCAL roots of the app heap name that
// thread. Its ROOT THREAD OBJECT must stay, or Android Studio's parser
// (perflib's HprofParser.loadJavaFrame and loadJniLocal look the thread up
// by its serial with no null check) fails and shows an empty heap: every
// thread a kept root names keeps its ROOT THREAD OBJECT.
func TestDropHeapKeepsThreads(t *testing.T) {
	src := testutil.ReadAll(t, filepath.Join(testutil.CorpusDir(t), "android-dalvik-kitkat-dialer.android-hprof"))
	origThreads, origNamed := threadRoots(t, src)
	for s := range origNamed {
		if !origThreads[s] {
			t.Fatalf("the original dump's roots name thread %d, which has no ROOT THREAD OBJECT: the oracle changed", s)
		}
	}
	for _, drop := range [][]string{{"zygote", "image"}, {"zygote"}, {"app"}} {
		out, _ := decrunchBytes(t, crunchBytes(t, src, crunch.Options{DropHeaps: drop}), Options{})
		threads, named := threadRoots(t, out)
		if len(named) == 0 {
			t.Fatalf("%v: no root names a thread: the dump changed", drop)
		}
		for s, n := range named {
			if !threads[s] {
				t.Errorf("%v: %d roots name thread %d, which has no ROOT THREAD OBJECT", drop, n, s)
			}
		}
		if len(threads) != len(origThreads) {
			t.Errorf("%v: %d ROOT THREAD OBJECT records, the original has %d", drop, len(threads), len(origThreads))
		}
	}
}
