package apkstrings

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"unicode/utf8"
)

// corpusSeed returns a corpus file's bytes, or nil when it is absent or
// larger than limit (big seeds slow the fuzzer down).
func corpusSeed(name string, limit int64) []byte {
	p := filepath.Join(corpusDir, name)
	fi, err := os.Stat(p)
	if err != nil || fi.Size() > limit {
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	return data
}

// checkReader verifies what a reader did with arbitrary input: the count
// matches what was emitted, and any error is a *FormatError.
func checkReader(t *testing.T, what string, n, emitted int, err error) {
	t.Helper()
	if n != emitted {
		t.Fatalf("%s returned %d but emitted %d", what, n, emitted)
	}
	if err != nil {
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("%s: error %T is not a *FormatError: %v", what, err, err)
		}
	}
}

func FuzzReadDEX(f *testing.F) {
	f.Add(buildDEX(dexSpec{}, []byte("hello"), []byte{0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}, []byte("a\xC0\x80b")))
	f.Add(buildDEX(dexSpec{version: "039", bigEndian: true}, []byte("x"), []byte("Lcom/a/B;")))
	f.Add(buildDEXContainer([]string{"a", "b"}, []string{"c"}))
	// Small seeds only: the fuzzer spends long minimizing inputs grown
	// from big ones.
	for _, name := range []string{"dex-jadx-hello.dex", "dex-art-dexdump-const-method-handle.dex"} {
		if data := corpusSeed(name, 4<<10); data != nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		emitted := 0
		n, err := ReadDEX(bytes.NewReader(data), int64(len(data)), func(s string) {
			emitted++
			if !utf8.ValidString(s) {
				t.Fatalf("emitted invalid UTF-8 %q", s)
			}
		})
		checkReader(t, "ReadDEX", n, emitted, err)
	})
}

func FuzzReadClass(f *testing.F) {
	f.Add(classWithAllTags())
	if data, err := os.ReadFile(filepath.Join("testdata", "Hello.class")); err == nil {
		f.Add(data)
	}
	// A few small classes of a real library.
	if jar := corpusSeed("jar-debian-commons-lang3-3.12.0.jar", 1<<20); jar != nil {
		if zr, err := zip.NewReader(bytes.NewReader(jar), int64(len(jar))); err == nil {
			files := zr.File
			sort.Slice(files, func(i, j int) bool { return files[i].UncompressedSize64 < files[j].UncompressedSize64 })
			added := 0
			for _, zf := range files {
				if added == 4 || filepath.Ext(zf.Name) != ".class" || zf.UncompressedSize64 < 600 {
					continue
				}
				if rc, err := zf.Open(); err == nil {
					if data, err := io.ReadAll(rc); err == nil {
						f.Add(data)
						added++
					}
					rc.Close()
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		emitted := 0
		n, err := ReadClass(data, func(s string) {
			emitted++
			if !utf8.ValidString(s) {
				t.Fatalf("emitted invalid UTF-8 %q", s)
			}
		})
		checkReader(t, "ReadClass", n, emitted, err)
	})
}

func FuzzParseMapping(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "mapping.txt")); err == nil {
		f.Add(data)
	}
	f.Add([]byte("a.One -> x:\n    int f -> a\n    1:2:void m(int):3:4 -> b\n    1:2:void n():5 -> b\n"))
	f.Add([]byte("\uFEFFcom.A -> a:\r\n    java.lang.String s -> b\r\n# c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMapping(bytes.NewReader(data))
		// Every line is checked whatever classes are kept.
		none, errNone := ParseMappingOf(bytes.NewReader(data), func(string) bool { return false })
		if fmt.Sprint(err) != fmt.Sprint(errNone) {
			t.Fatalf("ParseMapping: %v; keeping no class: %v", err, errNone)
		}
		if err == nil && (none.Classes() != 0 || none.ClassLines() != m.ClassLines()) {
			t.Fatalf("keeping no class: %d classes, %d class lines; ParseMapping: %d class lines", none.Classes(), none.ClassLines(), m.ClassLines())
		}
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *FormatError: %v", err, err)
			}
			return
		}
		for obf, c := range m.classes {
			for _, q := range []string{obf, obf + "[]", "[L" + obf + ";", "L" + obf + ";"} {
				m.Class(q)
			}
			for name := range c.fields {
				m.Field(obf, name)
			}
			for name := range c.methods {
				m.Method(obf, name)
			}
		}
		m.Class(string(data))
	})
}

func FuzzReadZip(f *testing.F) {
	// Seeds are kept to a few hundred bytes: minimizing each new input
	// costs time quadratic in its size, and with big seeds the fuzzer does
	// little else.
	class := classWithAllTags()
	jar := buildZip(f, zipEntry{name: "a/B.class", data: class})
	f.Add(jar)
	f.Add(append([]byte(jmodMagic), buildZip(f, zipEntry{name: "classes/a/B.class", data: class, stored: true})...))
	f.Add(buildZip(f, zipEntry{name: "classes.jar", data: jar, stored: true}, zipEntry{name: "libs/x.jar", data: jar}))
	f.Add(buildZip(f,
		zipEntry{name: "classes.dex", data: buildDEX(dexSpec{}, []byte("one"))},
		zipEntry{name: "classes2.dex", data: buildDEX(dexSpec{}, []byte("two")), stored: true},
	))
	if dex := corpusSeed("dex-jadx-hello.dex", 4<<10); dex != nil {
		f.Add(buildZip(f, zipEntry{name: "classes.dex", data: dex}))
	}
	// One file per fuzzing process, overwritten in place for each input:
	// creating or truncating a file to zero costs far more than parsing it
	// on some file systems, and the fuzzer would then spend its time
	// minimizing new inputs instead of finding them.
	p := filepath.Join(f.TempDir(), "in.zip")
	fh, err := os.Create(p)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { fh.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := fh.WriteAt(data, 0); err != nil {
			t.Fatal(err)
		}
		if err := fh.Truncate(int64(len(data))); err != nil {
			t.Fatal(err)
		}
		emitted := 0
		n, err := ReadAPK(p, func(string) { emitted++ })
		checkReader(t, "ReadAPK", n, emitted, err)
		emitted = 0
		n, err = ReadJAR(p, func(string) { emitted++ })
		checkReader(t, "ReadJAR", n, emitted, err)
	})
}

func FuzzSpellings(f *testing.F) {
	for _, s := range []string{
		"mDestroyed", "Lcom/a/B;", "[[Lcom.a.B;", "com.a.B[]", "I", "[[I", "int[]",
		"(I[Lcom/a/B;)V", "<T:Ljava/lang/Object;>(TT;)Lcom/a/O<TT;>.I;", "Ljava/util/Map<TK;+[TV;*>;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got []string
		Spellings(s, collect(&got))
		if len(got) == 0 || got[0] != s {
			t.Fatalf("first spelling of %q is not itself: %q", s, got)
		}
		seen := map[string]bool{}
		for _, g := range got {
			if seen[g] {
				t.Fatalf("Spellings(%q) repeats %q: %q", s, g, got)
			}
			seen[g] = true
			if utf8.ValidString(s) && !utf8.ValidString(g) {
				t.Fatalf("Spellings(%q) made invalid UTF-8 %q", s, g)
			}
		}
	})
}
