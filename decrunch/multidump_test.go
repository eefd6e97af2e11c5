package decrunch

import (
	"bytes"
	"slices"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/multidump"
)

// TestSeveralHeapDumps: a file with three heap dumps (classes dumped again
// in each with their statics of the moment, objects dumped again under the
// same IDs, new classes and objects, objects gone) comes back from crunch
// and decrunch with the same three heap dumps, record for record: the same
// objects in each, the same references, the same classes and names.
func TestSeveralHeapDumps(t *testing.T) {
	var src bytes.Buffer
	if err := multidump.Write(&src, 3); err != nil {
		t.Fatal(err)
	}
	want, err := heapstat.Canonical(src.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []crunch.Options{{KeepStrings: true}, {}} {
		b := crunchBytes(t, src.Bytes(), opt)
		out, _ := decrunchBytes(t, b, Options{Names: names(t, "java/lang/Object", "java/lang/String", "com/example/Node",
			"com/example/Later", "[Ljava/lang/Object;", "[B", "next", "value", "name", "COUNT")})
		got, err := heapstat.Canonical(out)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%+v: the heap dumps differ after a round trip:\n%s", opt, lineDiff(joinLines(want), joinLines(got)))
		}
	}
	if n := countPrefix(want, "heap dump "); n != 3 {
		t.Fatalf("test premise: %d heap dumps", n)
	}
}

func names(t *testing.T, candidates ...string) *NameTable {
	t.Helper()
	n := NewNameTable()
	add := n.Source("test")
	for _, c := range candidates {
		add(c)
	}
	return n
}

func joinLines(l []string) string {
	var b bytes.Buffer
	for _, s := range l {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	return b.String()
}

func countPrefix(l []string, p string) int {
	n := 0
	for _, s := range l {
		if len(s) >= len(p) && s[:len(p)] == p {
			n++
		}
	}
	return n
}
