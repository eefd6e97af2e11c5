package decrunch

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/apkstrings"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// javaBaseJmod returns the java.base.jmod of an installed JDK, or "".
func javaBaseJmod() string {
	var cands []string
	if h := os.Getenv("JAVA_HOME"); h != "" {
		cands = append(cands, filepath.Join(h, "jmods", "java.base.jmod"))
	}
	g, _ := filepath.Glob("/usr/lib/jvm/*/jmods/java.base.jmod")
	sort.Sort(sort.Reverse(sort.StringSlice(g)))
	for _, c := range append(cands, g...) {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return ""
}

// TestNameRecoveryLibUser is the real pair of the name-recovery
// requirement: a JDK program using a library JAR, dumped with jcmd and
// crunched with default options (names hashed). Decrunched with the
// library, the program's classes and the JDK's java.base.jmod, at least 99 %
// of the original class names must come back, and every class of the
// library and of the program must.
func TestNameRecoveryLibUser(t *testing.T) {
	dir := testutil.Fixture("libuser")
	src := testutil.ReadAll(t, filepath.Join(dir, "libuser.hprof.gz"))
	b := crunchBytes(t, src, crunch.Options{})

	names := NewNameTable()
	sources := []string{filepath.Join(dir, "lib.jar"), filepath.Join(dir, "libuser-app.jar")}
	jmod := javaBaseJmod()
	if jmod != "" {
		sources = append(sources, jmod)
	}
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
	if jmod == "" {
		t.Skip("no java.base.jmod (install a JDK with jmods): the 99 % check needs the JDK's own classes")
	}
	if rate < 0.99 {
		t.Errorf("only %.2f %% of class names recovered; missing: %v", 100*rate, missing)
	}
	for _, src := range []string{"lib.jar", "libuser-app.jar", filepath.Base(jmod)} {
		if names.RecoveredFrom()[src] == 0 {
			t.Errorf("no name recovered from %s", src)
		}
	}
}
