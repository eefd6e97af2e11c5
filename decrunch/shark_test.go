package decrunch

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/apkstrings"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// sharkSummary runs LeakCanary's Shark (../shared/tools/shark) on a dump
// and returns its report.
func sharkSummary(t *testing.T, tool, dump string) string {
	t.Helper()
	cmd := exec.Command(tool, dump)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("shark-summary %s: %v\n%s", filepath.Base(dump), err, stderr.String())
	}
	return string(out)
}

// sharkSummaryOf runs Shark's summary tool on the HPROF dump in data,
// written to a file of the test's.
func sharkSummaryOf(t *testing.T, tool string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "dump.hprof")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return sharkSummary(t, tool, p)
}

// sharkComparable drops the lines of a Shark report that may differ after
// a round trip: the file's name and size (decrunch may cut the heap dump
// into other segments) and the label it makes of a Fragment's tag, the
// app's String, whose contents no crunch keeps; and it blanks the texts of
// LeakCanary's KeyedWeakReference that Shark prints, its key and its
// description, Strings too. (Build.MANUFACTURER and the process name,
// Strings' texts too, stay: the app passes them to crunch as labels,
// deviceLabels.)
func sharkComparable(report string) string {
	var keep []string
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, "file.name=") || strings.HasPrefix(l, "file.bytes=") || strings.Contains(l, "Fragment.mTag = ") {
			continue
		}
		if i := strings.Index(l, "key = "); i >= 0 {
			l = l[:i+len("key = ")]
		}
		l = watchedBecause.ReplaceAllString(l, "${1}…$3")
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// watchedBecause matches the reason Shark gives for an object LeakCanary
// watched, the KeyedWeakReference's description in it ($2): up to the next
// reason or the reasons' end.
var watchedBecause = regexp.MustCompile(`(ObjectWatcher was watching this because )(.*?)( and [A-Z]|\)$)`)

// deviceLabels returns the labels an app on the device of dump src passes
// crunch (README, On the device): Build.MANUFACTURER and Build.ID, the
// texts of android.os.Build's statics in src, and, where src has an
// ActivityThread (an app's dump; the fixtures' stand-ins but
// testdata/watched's have none), ApplicationInfo.processName, its
// process name.
func deviceLabels(t *testing.T, src []byte) []string {
	t.Helper()
	var labels []string
	for label, static := range BuildLabels {
		s, ok, err := heapstat.StaticString(src, "android.os.Build", static)
		if err != nil || !ok || s.Text == "" {
			t.Fatalf("the dump's android.os.Build.%s: %q, %v, %v", static, s.Text, ok, err)
		}
		labels = append(labels, label+"="+s.Text)
	}
	s, ok, err := heapstat.ProcessName(src)
	if err != nil {
		t.Fatal(err)
	}
	if ok && s.Text != "" {
		labels = append(labels, ProcessNameLabel+"="+s.Text)
	}
	return labels
}

// TestSharkDialer is the product's flow on the only real Android dump: the
// phone crunches with defaults and the device's labels (and with
// --profile leak), the server
// restores with only the names the app's own files give (its classes that
// the boot class loader did not load, and their fields), and LeakCanary's
// Shark finds the same leaks, with the same traces, retained sizes,
// dominators, SDK_INT=19 and Build.MANUFACTURER ("unknown", a Dalvik
// String: offset and count), as on the original dump.
func TestSharkDialer(t *testing.T) {
	tool := testutil.SharedTool(t, "shark/shark-summary.sh")
	orig := filepath.Join(testutil.CorpusDir(t), "android-dalvik-kitkat-dialer.android-hprof")
	src := testutil.ReadAll(t, orig)
	want := sharkComparable(sharkSummary(t, tool, orig))
	for _, line := range []string{"metadata.Build.VERSION.SDK_INT=19", "metadata.Build.MANUFACTURER=unknown", "applicationLeaks=1", "totalRetainedBytes=836 totalRetainedObjects=16"} {
		if !strings.Contains(want, line) {
			t.Fatalf("Shark on the original dump does not report %q: the oracle changed", line)
		}
	}
	for _, c := range []struct {
		name string
		opt  crunch.Options
	}{{"default", crunch.Options{Labels: deviceLabels(t, src)}}, {"profile leak", crunch.Options{Profile: "leak", Labels: deviceLabels(t, src)}}} {
		t.Run(c.name, func(t *testing.T) {
			out, st := userFlow(t, src, c.opt)
			if st.Missing != 0 {
				t.Errorf("%d hashed names not recovered from the app's names", st.Missing)
			}
			if got := sharkComparable(sharkSummaryOf(t, tool, out)); got != want {
				t.Errorf("Shark's report differs:\n%s", lineDiff(want, got))
			}
		})
	}
}

// lineDiff lists the lines of a missing from b ("-") and of b missing
// from a ("+").
func lineDiff(a, b string) string {
	count := map[string]int{}
	for _, l := range strings.Split(a, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(b, "\n") {
		count[l]--
	}
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if count[l] > 0 {
			out = append(out, "- "+l)
			count[l]--
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if count[l] < 0 {
			out = append(out, "+ "+l)
			count[l]++
		}
	}
	return strings.Join(out, "\n")
}

// sharkLeaks returns the leak analysis of a Shark report: from its count of
// application leaks to the end of its traces.
func sharkLeaks(t *testing.T, report string) string {
	t.Helper()
	_, rest, ok := strings.Cut(report, "\napplicationLeaks=")
	if !ok {
		t.Fatalf("no leak analysis in Shark's report:\n%s", report)
	}
	leaks, _, _ := strings.Cut(rest, "\n## ")
	return "applicationLeaks=" + leaks
}

// TestSharkDropHeapImage: with the image heap left out (--drop-heap image,
// the app's objects and the zygote's kept), Shark finds the dialer dump's
// leak with the same traces and retained sizes as on the original. (With
// the zygote heap left out it cannot run: it reads Build.MANUFACTURER,
// whose String lies in that heap; README, Known gaps.)
func TestSharkDropHeapImage(t *testing.T) {
	tool := testutil.SharedTool(t, "shark/shark-summary.sh")
	orig := filepath.Join(testutil.CorpusDir(t), "android-dalvik-kitkat-dialer.android-hprof")
	src := testutil.ReadAll(t, orig)
	want := sharkLeaks(t, sharkSummary(t, tool, orig))
	if !strings.Contains(want, "applicationLeaks=1\n") || !strings.Contains(want, "totalRetainedBytes=836 totalRetainedObjects=16") {
		t.Fatalf("Shark's leak analysis of the original changed: the oracle changed:\n%s", want)
	}
	out, st := userFlow(t, src, crunch.Options{DropHeaps: []string{"image"}})
	if st.Missing != 0 {
		t.Errorf("%d hashed names not recovered from the app's names", st.Missing)
	}
	if got := sharkLeaks(t, sharkSummaryOf(t, tool, out)); got != want {
		t.Errorf("Shark's leak analysis differs:\n%s", lineDiff(want, got))
	}
}

// userFlow is the user's flow on the dump src: crunched with opt (the
// phone's), decrunched with only the names the app's own files give
// (appNameTable).
func userFlow(t *testing.T, src []byte, opt crunch.Options) ([]byte, *Stats) {
	t.Helper()
	return decrunchBytes(t, crunchBytes(t, src, opt), Options{Names: appNameTable(t, src)})
}

// appNameTable returns a name table of the names the app's own files give
// for the dump src: its classes that the boot class loader did not load,
// and their fields and statics (heapstat.AppNames).
func appNameTable(t *testing.T, src []byte) *NameTable {
	t.Helper()
	appNames, err := heapstat.AppNames(src)
	if err != nil {
		t.Fatal(err)
	}
	names := NewNameTable()
	add := names.Source("app")
	for _, n := range appNames {
		add(n)
	}
	return names
}

// TestSharkFragmentLeak is the product's flow on the leak Android apps
// have most, an androidx Fragment kept after it was destroyed
// (testdata/fragment: a HotSpot dump of gen/FragmentLeak.java, with
// stand-ins for android.os.Build on the boot class path and for androidx
// in the app's jar). Shark finds a destroyed Fragment by the name of its
// lifecycle state, an enum constant's name String, which a BMD does not
// hold: crunched with defaults and restored with the app's jar alone,
// Shark must give the same report as on the original, the leak, its trace
// and its retained size included (decrunch writes the constants' names
// back, enumnames.go).
func TestSharkFragmentLeak(t *testing.T) {
	st := sharkFixture(t, "fragment", "fragmentleak", "metadata.Build.VERSION.SDK_INT=33", "applicationLeaks=1",
		"shortDescription=FragmentLeak.leakedFragment", "Leaking: YES (Fragment.mLifecycleRegistry.state is DESTROYED)")
	if st.EnumNames == 0 {
		t.Errorf("no enum names written back")
	}
}

// TestSharkActivityLeak is the product's flow on the other leak Android
// apps have most, an Activity held after the framework destroyed it, here
// by a callback it registered (testdata/activity: a HotSpot dump of
// gen/ActivityLeak.java, with stand-ins for android.app.Activity,
// android.os.Looper, android.os.Build and InputMethodManager on the boot
// class path). Shark finds a destroyed Activity by its mDestroyed field, a
// primitive value, and ignores the locals of the thread named "main", one
// of which holds the activity. A second destroyed activity is held by the
// input method manager, a leak Shark knows as Samsung's on Android 9 to 11
// (a library leak, not the app's) by Build.MANUFACTURER, "samsung", a
// String's text. Crunched with defaults, which keep the framework's
// lifecycle flags (crunch.LifecycleFlags) and no other primitive value,
// with the labels the app passes on the device (deviceLabels), and
// restored with the app's jar alone (decrunch writes the main thread's
// name and Build's texts back: enumnames.go), Shark must give the
// original's report, both leaks, their traces and retained sizes included.
// Without the labels, it reports Samsung's leak as the app's.
func TestSharkActivityLeak(t *testing.T) {
	st := sharkFixture(t, "activity", "activityleak", "metadata.Build.VERSION.SDK_INT=30", "metadata.Build.MANUFACTURER=samsung",
		"applicationLeaks=1", "libraryLeaks=1", "shortDescription=ActivityLeak.onNetworkChange", "Leaking: YES (Activity#mDestroyed is true)",
		"Retaining 2.1 kB in 3 objects", "shortDescription=instance field android.view.inputmethod.InputMethodManager#mCurrentInputConnection")
	if st.BuildTexts != 2 || st.ThreadNames != 1 {
		t.Errorf("%d Build texts and %d thread names written back, want 2 and 1", st.BuildTexts, st.ThreadNames)
	}
	t.Run("without labels", func(t *testing.T) {
		tool := testutil.SharedTool(t, "shark/shark-summary.sh")
		dir := testutil.Fixture("activity")
		src := testutil.ReadAll(t, filepath.Join(dir, "activityleak.hprof.gz"))
		out, _ := decrunchBytes(t, crunchBytes(t, src, crunch.Options{}), Options{Names: appJarNames(t, dir, "activityleak")})
		if got := sharkLeaks(t, sharkSummaryOf(t, tool, out)); !strings.HasPrefix(got, "applicationLeaks=2\nlibraryLeaks=0\n") {
			t.Errorf("without the labels Shark reports, want Samsung's leak as an application leak:\n%s", got)
		}
	})
}

// TestSharkWatchedLeak is the product's flow on a debug build's app with
// LeakCanary and Compose (testdata/watched): Shark decides which objects
// leak by primitive fields of the libraries the app bundles, which a
// default crunch keeps (LeakCanary's KeyedWeakReference times, Compose's
// CompositionImpl.disposed: crunch.LibraryLeakFlags), and follows a list's
// elements up to its ArrayList.size and adds a Bitmap's native bytes to
// the retained sizes by NativeAllocationRegistry.size
// (crunch.PlatformSizes). The round trip must give the original's report,
// but for the key and description texts of LeakCanary's references
// (sharkComparable): the composition disposed, the cart model retained,
// the presenter watched but not yet retained (no leak), the cart's trace
// through ArrayList[0], the activity retaining its bitmap's 480,000 native
// bytes.
func TestSharkWatchedLeak(t *testing.T) {
	sharkFixture(t, "watched", "watchedleak", "applicationLeaks=2", "libraryLeaks=0",
		"shortDescription=WatchedLeak.lastComposition", "Leaking: YES (Composition disposed)",
		"shortDescription=WatchedLeak.held", "↓ ArrayList[0]", "watchDurationMillis = 12000", "retainedDurationMillis = 7000",
		"Retaining 481.1 kB in 3 objects", "metadata.Bitmap total bytes=960000", "nativeSizeEntries=2 nativeBytes=960000",
		"metadata.App process name=com.example.watched")
}

// sharkFixture runs the user's flow on testdata/DIR/NAME.hprof.gz, an
// Android app's leak: crunch with defaults and the device's labels
// (deviceLabels), decrunch with the app's jar (NAME-app.jar) alone.
// Shark's report on the round trip must be the original's
// (sharkComparable), which must hold each of the oracle's lines. It
// returns decrunch's stats.
func sharkFixture(t *testing.T, dir, name string, oracle ...string) *Stats {
	t.Helper()
	tool := testutil.SharedTool(t, "shark/shark-summary.sh")
	dir = testutil.Fixture(dir)
	src := testutil.ReadAll(t, filepath.Join(dir, name+".hprof.gz"))
	want := sharkComparable(sharkSummaryOf(t, tool, src))
	for _, line := range oracle {
		if !strings.Contains(want, line) {
			t.Fatalf("Shark on the original dump does not report %q: the oracle changed", line)
		}
	}
	out, st := decrunchBytes(t, crunchBytes(t, src, crunch.Options{Labels: deviceLabels(t, src)}), Options{Names: appJarNames(t, dir, name)})
	if st.Missing != 0 {
		t.Errorf("%d hashed names not recovered from the app's jar", st.Missing)
	}
	if got := sharkComparable(sharkSummaryOf(t, tool, out)); got != want {
		t.Errorf("Shark's report differs:\n%s", lineDiff(want, got))
	}
	return st
}

// appJarNames returns a name table of the names of DIR/NAME-app.jar, the
// app's classes.
func appJarNames(t *testing.T, dir, name string) *NameTable {
	t.Helper()
	names := NewNameTable()
	add := names.Source(name + "-app.jar")
	if _, err := apkstrings.ReadJAR(filepath.Join(dir, name+"-app.jar"), func(s string) { apkstrings.Spellings(s, add) }); err != nil {
		t.Fatal(err)
	}
	return names
}
