package main

import (
	"bufio"
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/clitest"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestObfuscatedApp is the user's flow for an app built with ProGuard: a
// real dump of an obfuscated program (testdata/obfuscated: LibUser and
// its library through ProGuard 6.2.2), crunched with default options and
// decrunched with the app's own files only, its obfuscated jar and
// ProGuard's mapping.txt. Every name is recovered, and the heap is the
// original's under the mapping's names: heapstat.Canonical of the output
// (every object, reference, array length, instance size and root) is the
// original's with each class line's class, field and static names renamed
// as mapping.txt says, read here by a parser of the test's own. Field names
// are left out of instance lines, whose fields are those the class lines
// list. Without the mapping, the output is the original's heap, names and
// all.
func TestObfuscatedApp(t *testing.T) {
	dir := testutil.Fixture("obfuscated")
	src := testutil.ReadAll(t, filepath.Join(dir, "obfuscated.hprof.gz"))
	classes, fields := readProGuardMapping(t, filepath.Join(dir, "mapping.txt"))
	d := clitest.NewDir(t)
	d.Write(t, "in.bmd", crunchBytes(t, src, crunch.Options{}))
	jar := filepath.Join(dir, "obfuscated.jar")
	orig, err := heapstat.Canonical(src)
	if err != nil {
		t.Fatal(err)
	}

	r := d.Run(t, nil, decrunchBin, "in.bmd", "--jar", jar, "--stats", "-o", "plain.hprof")
	clitest.ExpectOK(t, r)
	if !strings.Contains(r.Stderr, ", 0 not recovered") {
		t.Errorf("names left unrecovered: %q", r.Stderr)
	}
	plain, err := heapstat.Canonical(d.Read(t, "plain.hprof"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := setDiff(orig, plain); diff != "" {
		t.Errorf("decrunched without the mapping, the heap differs from the original:\n%s", diff)
	}

	r = d.Run(t, nil, decrunchBin, "in.bmd", "--jar", jar, "--mapping", filepath.Join(dir, "mapping.txt"), "--stats", "-o", "mapped.hprof")
	clitest.ExpectOK(t, r)
	out, err := heapstat.Canonical(d.Read(t, "mapped.hprof"))
	if err != nil {
		t.Fatal(err)
	}
	renamed := 0
	want := make([]string, len(orig))
	for i, l := range orig {
		want[i] = renameLine(l, classes, fields)
		if want[i] != l {
			renamed++
		}
	}
	if renamed < 20 {
		t.Fatalf("test premise: the mapping renames %d lines of the original's heap", renamed)
	}
	if diff := setDiff(dropFieldNames(want), dropFieldNames(out)); diff != "" {
		t.Errorf("decrunched with the mapping, the heap differs from the original's under the mapping's names:\n%s", diff)
	}
	for _, l := range out {
		if strings.Contains(l, "unknown$") {
			t.Errorf("a name left unrecovered: %.200s", l)
		}
	}
}

// readProGuardMapping reads the class and field lines of a ProGuard
// mapping: the original class name of each obfuscated one, and the
// original field name of each obfuscated field of an obfuscated class, all
// dotted.
func readProGuardMapping(t *testing.T, path string) (classes map[string]string, fields map[string]map[string]string) {
	t.Helper()
	classLine := regexp.MustCompile(`^(\S+) -> (\S+):$`)
	fieldLine := regexp.MustCompile(`^\s+[^\s(]+ ([^\s(]+) -> (\S+)$`)
	classes, fields = map[string]string{}, map[string]map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(testutil.ReadAll(t, path)))
	cur := ""
	for sc.Scan() {
		if m := classLine.FindStringSubmatch(sc.Text()); m != nil {
			cur = m[2]
			classes[cur] = m[1]
			fields[cur] = map[string]string{}
		} else if m := fieldLine.FindStringSubmatch(sc.Text()); m != nil && cur != "" {
			fields[cur][m[2]] = m[1]
		}
	}
	if len(classes) == 0 {
		t.Fatalf("%s: no class line", path)
	}
	return classes, fields
}

// renameLine renames, in a class line of heapstat.Canonical ("class #N
// a/b super=#S ... static x:type=#R field y:type"), the class (also an
// array class, "[La/b;") and its fields and statics by the mapping; other
// lines are returned as they are.
func renameLine(l string, classes map[string]string, fields map[string]map[string]string) string {
	w := strings.Split(l, " ")
	if w[0] != "class" || len(w) < 3 {
		return l
	}
	name := w[2]
	pre, suf := "", ""
	if strings.HasPrefix(name, "[") {
		i := strings.LastIndexByte(name, '[') + 1
		if !strings.HasPrefix(name[i:], "L") {
			return l // a primitive array class
		}
		pre, suf, name = name[:i+1], ";", strings.TrimSuffix(name[i+1:], ";")
	}
	obf := strings.ReplaceAll(name, "/", ".")
	orig, ok := classes[obf]
	if !ok {
		return l
	}
	w[2] = pre + strings.ReplaceAll(orig, ".", "/") + suf
	for i := 3; i+1 < len(w); i++ {
		if w[i] != "static" && w[i] != "field" || pre != "" {
			continue
		}
		f, rest, _ := strings.Cut(w[i+1], ":")
		if o, ok := fields[obf][f]; ok {
			w[i+1] = o + ":" + rest
		}
	}
	return strings.Join(w, " ")
}

var instanceField = regexp.MustCompile(` [^ =]+=`)

// dropFieldNames leaves the field names out of heapstat.Canonical's
// instance lines.
func dropFieldNames(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if strings.HasPrefix(l, "instance ") {
			l = instanceField.ReplaceAllString(l, " =")
		}
		out[i] = l
	}
	return out
}

// setDiff returns the lines of a not in b ("- ") and of b not in a
// ("+ "), at most twenty in all, or "".
func setDiff(a, b []string) string {
	count := map[string]int{}
	for _, l := range a {
		count[l]++
	}
	for _, l := range b {
		count[l]--
	}
	var only []string
	for l, n := range count {
		switch {
		case n > 0 && len(only) < 20:
			only = append(only, "- "+l)
		case n < 0 && len(only) < 20:
			only = append(only, "+ "+l)
		}
	}
	return strings.Join(only, "\n")
}
