package decrunch

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestRecrunchKeepsHashes: an HPROF decrunched without the app's names
// holds unknown$<hash> placeholders; crunched again, each placeholder keeps
// its hash (its length is not known), so that decrunching that file with
// the app's names recovers them, array names included.
func TestRecrunchKeepsHashes(t *testing.T) {
	src := testutil.ReadAll(t, testutil.Fixture("libuser/libuser.hprof.gz"))
	first, st := decrunchBytes(t, crunchBytes(t, src, crunch.Options{}), Options{})
	if st.Missing == 0 {
		t.Fatal("test premise: no name left as a placeholder")
	}
	second := crunchBytes(t, first, crunch.Options{})
	names := appNameTable(t, src)
	out, st2 := decrunchBytes(t, second, Options{Names: names})
	_, direct := decrunchBytes(t, crunchBytes(t, src, crunch.Options{}), Options{Names: names})
	if direct.Recovered == 0 || st2.Recovered != direct.Recovered || st2.Missing != direct.Missing {
		t.Errorf("re-crunched: %d names recovered, %d missing; from the first BMD %d and %d (%d placeholders)",
			st2.Recovered, st2.Missing, direct.Recovered, direct.Missing, st.Missing)
	}
	want, err := heapstat.Canonical(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := heapstat.Canonical(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := lineDiff(joinLines(want), joinLines(got)); d != "" {
		t.Errorf("after decrunch, crunch and decrunch with the names, the heap differs:\n%s", d)
	}
}

// TestArrayNamePlaceholders: the name of an array class whose element
// class is an app's, not recovered, keeps the array's shape in the
// spelling of its dump: unknown$<hash>[] in an Android dump,
// [Lunknown$<hash>; in a JDK's.
func TestArrayNamePlaceholders(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{filepath.Join(testutil.CorpusDir(t), "android-dalvik-kitkat-dialer.android-hprof"), `unknown\$[0-9a-f]{16}\[\]`},
		{testutil.Fixture("libuser/libuser.hprof.gz"), `\[Lunknown\$[0-9a-f]{16};`},
	} {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			out, _ := decrunchBytes(t, crunchBytes(t, testutil.ReadAll(t, c.path), crunch.Options{}), Options{})
			if n := len(regexp.MustCompile(c.want).FindAll(out, -1)); n == 0 {
				t.Errorf("no array class name of the form %s", c.want)
			}
			// No other shape: a placeholder followed by a descriptor's
			// end in an Android dump, or by [] in a JDK's.
			other := `\[Lunknown\$[0-9a-f]{16};`
			if strings.HasPrefix(c.want, `\[`) {
				other = `unknown\$[0-9a-f]{16}\[\]`
			}
			if m := regexp.MustCompile(other).Find(out); m != nil {
				t.Errorf("array class name %q in the other VM's spelling", m)
			}
		})
	}
}
