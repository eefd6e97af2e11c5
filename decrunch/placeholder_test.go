package decrunch

import (
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
	appNames, err := heapstat.AppNames(src)
	if err != nil {
		t.Fatal(err)
	}
	first, st := decrunchBytes(t, crunchBytes(t, src, crunch.Options{}), Options{})
	if st.Missing == 0 {
		t.Fatal("test premise: no name left as a placeholder")
	}
	second := crunchBytes(t, first, crunch.Options{})
	names := NewNameTable()
	add := names.Source("app")
	for _, n := range appNames {
		add(n)
	}
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
