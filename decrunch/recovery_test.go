package decrunch

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/apkstrings"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestNameRecoveryLibUser is the real pair of the name-recovery
// requirement: a JDK program using a library JAR, dumped with jcmd and
// crunched with default options (the JDK's names in the clear, the app's
// hashed). Decrunched with only the app's own files, the library and the
// program's classes, every class name and every hashed name must come
// back.
func TestNameRecoveryLibUser(t *testing.T) {
	dir := testutil.Fixture("libuser")
	src := testutil.ReadAll(t, filepath.Join(dir, "libuser.hprof.gz"))
	b := crunchBytes(t, src, crunch.Options{})

	names := NewNameTable()
	sources := []string{filepath.Join(dir, "lib.jar"), filepath.Join(dir, "libuser-app.jar")}
	for _, p := range sources {
		add := names.Source(filepath.Base(p))
		if _, err := apkstrings.ReadJAR(p, func(s string) { apkstrings.Spellings(s, add) }); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	out, st := decrunchBytes(t, b, Options{Names: names})

	want, err := heapstat.Summarize(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := heapstat.Summarize(out)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	appMissing := 0
	for name := range want.Classes {
		if _, ok := got.Classes[name]; ok {
			continue
		}
		missing = append(missing, name)
		if strings.HasPrefix(name, "org.example.lib.") || strings.HasPrefix(name, "LibUser") {
			appMissing++
		}
	}
	sort.Strings(missing)
	total := len(want.Classes)
	rate := float64(total-len(missing)) / float64(total)
	t.Logf("class names recovered: %d of %d (%.2f %%); strings: %d recovered, %d missing, %d collisions; by source %v",
		total-len(missing), total, 100*rate, st.Recovered, st.Missing, names.Collisions, names.RecoveredFrom())
	if appMissing > 0 {
		t.Errorf("%d library or program classes not recovered: %v", appMissing, missing)
	}
	if names.Collisions != 0 {
		t.Errorf("%d hash collisions between different candidates", names.Collisions)
	}
	if len(missing) > 0 || st.Missing > 0 {
		t.Errorf("%d class names and %d hashed names not recovered; classes: %v", len(missing), st.Missing, missing)
	}
	for _, src := range []string{"lib.jar", "libuser-app.jar"} {
		if names.RecoveredFrom()[src] == 0 {
			t.Errorf("no name recovered from %s", src)
		}
	}
}
