package apkstrings

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func loadMapping(t *testing.T) *Mapping {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "mapping.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := ParseMapping(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMappingClass(t *testing.T) {
	m := loadMapping(t)
	for _, tt := range []struct {
		in, want string
	}{
		{"a.a", "com.example.app.Util"},
		{"a/a", "com/example/app/Util"},
		{"a.a$a", "com.example.app.Util$Helper"},
		{"a/a$a", "com/example/app/Util$Helper"},
		{"a.b", "com.example.app.data.Repository"},
		{"a.a[]", "com.example.app.Util[]"},
		{"a/a[][]", "com/example/app/Util[][]"},
		{"[La/a;", "[Lcom/example/app/Util;"},
		{"[[La.b;", "[[Lcom.example.app.data.Repository;"},
		{"La/a;", "Lcom/example/app/Util;"},
		{"com.example.app.MainActivity", "com.example.app.MainActivity"},
		{"com/example/app/MainActivity", "com/example/app/MainActivity"},
		{"a.c", ""},
		{"[I", ""},
		{"", ""},
		{"[", ""},
		{"[L;", ""},
	} {
		got, ok := m.Class(tt.in)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Class(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
}

func TestMappingMembers(t *testing.T) {
	m := loadMapping(t)
	for _, tt := range []struct {
		kind, class, name, want string
	}{
		{"field", "a.a", "a", "TAG"},
		{"field", "a/a", "a", "TAG"},
		{"field", "com.example.app.MainActivity", "d", "titleView"},
		{"field", "a.a$a", "a", ""}, // value and label: ambiguous
		{"field", "a.a$a", "b", "stamp"},
		{"field", "a.a", "zz", ""},
		{"field", "zz", "a", ""},
		{"method", "a.a", "a", "log"},
		{"method", "a.a", "b", "add"}, // two overloads, one name
		{"method", "a.a", "c", ""},    // format and describe: ambiguous
		{"method", "com.example.app.MainActivity", "onCreate", "onCreate"},
		{"method", "com/example/app/MainActivity", "<init>", "<init>"},
		{"method", "a.b", "a", "getItems"},
		{"method", "a.b", "b", "refresh"}, // Util.log was inlined into it
		{"method", "a.a$a", "a", "help"},
		{"method", "a.a", "zz", ""},
	} {
		var got string
		var ok bool
		if tt.kind == "field" {
			got, ok = m.Field(tt.class, tt.name)
		} else {
			got, ok = m.Method(tt.class, tt.name)
		}
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("%s(%q, %q) = %q, %v; want %q", tt.kind, tt.class, tt.name, got, ok, tt.want)
		}
	}
}

func TestMappingAmbiguousClass(t *testing.T) {
	m, err := ParseMapping(strings.NewReader("a.One -> x:\na.Two -> x:\na.Three -> y:\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := m.Class("x"); ok {
		t.Errorf("Class(x) = %q, want ambiguous", got)
	}
	if got, ok := m.Class("y"); !ok || got != "a.Three" {
		t.Errorf("Class(y) = %q, %v", got, ok)
	}
	var nilMap *Mapping
	if _, ok := nilMap.Class("y"); ok {
		t.Error("nil mapping answered")
	}
	if _, ok := nilMap.Method("y", "a"); ok {
		t.Error("nil mapping answered")
	}
}

func TestMappingErrors(t *testing.T) {
	for _, tt := range []struct {
		in   string
		line string
	}{
		{"    int a -> b\n", "line 1"},
		{"# c\ncom.A -> a\n", "line 2"},
		{"com.A -> a:\n    int a\n", "line 2"},
		{"com.A -> a:\n\n    1:x:void f() -> a\n", "line 3"},
		{"com.A -> a:\n    void f( -> a\n", "line 2"},
		{"com.A -> a:\n    a -> b\n", "line 2"},
		{"com.A -> a:\n    int a -> b c\n", "line 2"},
		{"com A -> a:\n", "line 1"},
	} {
		_, err := ParseMapping(strings.NewReader(tt.in))
		if err == nil {
			t.Errorf("%q: no error", tt.in)
			continue
		}
		fe := asFormatError(t, err)
		if !strings.Contains(fe.Msg, tt.line) {
			t.Errorf("%q: %v does not say %s", tt.in, err, tt.line)
		}
	}
}

func TestMappingCRLFAndBOM(t *testing.T) {
	m, err := ParseMapping(strings.NewReader("\uFEFFcom.A -> a:\r\n    int count -> b\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := m.Field("a", "b"); !ok || got != "count" {
		t.Errorf("Field = %q, %v", got, ok)
	}
	if got, ok := m.Class("a"); !ok || got != "com.A" {
		t.Errorf("Class = %q, %v", got, ok)
	}
}

// TestMappingClasses: Classes counts the classes a mapping names, members
// and comments aside.
func TestMappingClasses(t *testing.T) {
	for text, want := range map[string]int{
		"":                            0,
		"# compiler: R8\n# x\n":       0,
		"a.B -> c:\n    int f -> g\n": 1,
		"a.B -> c:\nd.E -> f:\n":      2,
	} {
		m, err := ParseMapping(strings.NewReader(text))
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if got := m.Classes(); got != want {
			t.Errorf("%q: %d classes, want %d", text, got, want)
		}
	}
}

// TestMappingLongNames checks that a lookup of a name longer than any the
// mapping holds fails without work sized by it: a dump may name a 1 MB
// string in every frame or field, and each lookup used to copy it
// (slashes to dots) and hash it, 17 s for 80,000 frames of a 500 KB name.
// The longest names the mapping does hold, and their arrays up to the
// JVM's 255 dimensions, are still found.
func TestMappingLongNames(t *testing.T) {
	m := loadMapping(t)
	longest := "com/example/app/MainActivity" // the file's longest obfuscated class name
	for _, tt := range []struct{ in, want string }{
		{longest + strings.Repeat("[]", 255), longest + strings.Repeat("[]", 255)},
		{strings.Repeat("[", 255) + "L" + longest + ";", strings.Repeat("[", 255) + "L" + longest + ";"},
		{"a/a" + strings.Repeat("[]", 255), "com/example/app/Util" + strings.Repeat("[]", 255)},
	} {
		if got, ok := m.Class(tt.in); !ok || got != tt.want {
			t.Errorf("Class(%.40q...) = %.40q..., %v; want %.40q...", tt.in, got, ok, tt.want)
		}
	}
	long := "a/" + strings.Repeat("x", 1<<20)
	arr := longest + strings.Repeat("[]", 256)
	lookups := map[string]func() bool{
		"Class(long)":      func() bool { _, ok := m.Class(long); return ok },
		"Class(256 dims)":  func() bool { _, ok := m.Class(arr); return ok },
		"Field(long, a)":   func() bool { _, ok := m.Field(long, "a"); return ok },
		"Method(long, a)":  func() bool { _, ok := m.Method(long, "a"); return ok },
		"Field(a.a, long)": func() bool { _, ok := m.Field("a.a", long); return ok },
	}
	for name, f := range lookups {
		if f() {
			t.Errorf("%s found a name", name)
		}
		// Without the bound, each of the first four copies the name.
		if allocs := testing.AllocsPerRun(10, func() { f() }); allocs != 0 {
			t.Errorf("%s: %v allocations per lookup, want 0", name, allocs)
		}
	}
}

// TestParseMappingOf: a mapping parsed keeping some classes answers for
// those as the whole mapping does, and for no other; it counts every class
// line; a malformed line of a class it does not keep is still an error.
func TestParseMappingOf(t *testing.T) {
	data := genMapping(300)
	whole, err := ParseMapping(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	asked := map[string]bool{}
	keep := func(obf string) bool { asked[obf] = true; return strings.HasSuffix(obf, "7") }
	some, err := ParseMappingOf(bytes.NewReader(data), keep)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 300 || some.Classes() != 30 || some.ClassLines() != 300 || whole.ClassLines() != 300 {
		t.Fatalf("asked about %d classes, kept %d of %d class lines (whole: %d); want 300, 30, 300, 300", len(asked), some.Classes(), some.ClassLines(), whole.ClassLines())
	}
	for i := range 300 {
		obf := fmt.Sprintf("a.b.c%d", i)
		kept := keep(obf)
		for _, q := range []string{obf, "a/b/c" + obf[5:], obf + "[]", "[La/b/c" + obf[5:] + ";"} {
			w, _ := whole.Class(q)
			if got, ok := some.Class(q); ok != kept || kept && got != w {
				t.Errorf("Class(%q) = %q, %v; whole: %q; kept %v", q, got, ok, w, kept)
			}
		}
		for _, f := range []string{"f0", "f9"} {
			w, _ := whole.Field(obf, f)
			if got, ok := some.Field(obf, f); ok != kept || kept && got != w {
				t.Errorf("Field(%q, %q) = %q, %v; whole: %q", obf, f, got, ok, w)
			}
		}
		for _, m := range []string{"m0", "m10", "m19"} {
			w, _ := whole.Method(obf, m)
			if got, ok := some.Method(obf, m); ok != kept || kept && got != w {
				t.Errorf("Method(%q, %q) = %q, %v; whole: %q", obf, m, got, ok, w)
			}
		}
	}
	if got, ok := some.Method("a.b.c7", "m10"); !ok || got != "someMethodWithALongName10" {
		t.Errorf("Method(a.b.c7, m10) = %q, %v", got, ok)
	}
	bad := "com.A -> a:\n    int x -> a\ncom.B -> b:\n    void f( -> a\n"
	_, err = ParseMappingOf(strings.NewReader(bad), func(obf string) bool { return obf == "a" })
	if fe := asFormatError(t, err); !strings.Contains(fe.Msg, "line 4") {
		t.Errorf("malformed line of a class not kept: %v, want an error at line 4", err)
	}
}
