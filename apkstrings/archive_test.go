package apkstrings

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadAPKMultiDex(t *testing.T) {
	apk := buildZip(t,
		zipEntry{name: "AndroidManifest.xml", data: []byte("<manifest/>")},
		zipEntry{name: "classes10.dex", data: buildDEX(dexSpec{}, []byte("ten"))},
		zipEntry{name: "classes2.dex", data: buildDEX(dexSpec{}, []byte("two"), []byte("deux")), stored: true},
		zipEntry{name: "classes.dex", data: buildDEX(dexSpec{version: "039"}, []byte("one"))},
		zipEntry{name: "assets/classes3.dex", data: buildDEX(dexSpec{}, []byte("asset"))},
		zipEntry{name: "lib/classes4.dex", data: buildDEX(dexSpec{}, []byte("lib"))},
		zipEntry{name: "classesX.dex", data: buildDEX(dexSpec{}, []byte("x"))},
	)
	p := writeTemp(t, "app.apk", apk)
	var got []string
	n, err := ReadAPK(p, collect(&got))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"one", "two", "deux", "ten"}; n != 4 || !slices.Equal(got, want) {
		t.Fatalf("got %d %q, want %q", n, got, want)
	}
}

func TestReadAPKBundle(t *testing.T) {
	aab := buildZip(t,
		zipEntry{name: "base/dex/classes.dex", data: buildDEX(dexSpec{}, []byte("base"))},
		zipEntry{name: "feature/dex/classes2.dex", data: buildDEX(dexSpec{}, []byte("feature"))},
		zipEntry{name: "base/manifest/AndroidManifest.xml", data: []byte("x")},
	)
	var got []string
	if _, err := ReadAPK(writeTemp(t, "app.aab", aab), collect(&got)); err != nil {
		t.Fatal(err)
	}
	if want := []string{"base", "feature"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestReadAPKNoDex(t *testing.T) {
	p := writeTemp(t, "res.apk", buildZip(t, zipEntry{name: "res/layout/main.xml", data: []byte("x")}))
	n, err := ReadAPK(p, func(string) { t.Error("emit called") })
	if n != 0 || err != nil {
		t.Fatalf("got %d, %v", n, err)
	}
}

func TestReadAPKNotZip(t *testing.T) {
	for name, data := range map[string][]byte{
		"text.apk":  []byte("this is a text file, not an APK\n"),
		"empty.apk": nil,
		"dex.apk":   buildDEX(dexSpec{}, []byte("x")),
		"cut.apk":   buildZip(t, zipEntry{name: "classes.dex", data: buildDEX(dexSpec{}, []byte("x"))})[:60],
	} {
		_, err := ReadAPK(writeTemp(t, name, data), func(string) {})
		fe := asFormatError(t, err)
		if !strings.HasSuffix(fe.Path, name) || !strings.Contains(fe.Msg, "not a zip archive") {
			t.Errorf("%s: %v, want \"not a zip archive\" and the path", name, fe)
		}
	}
	_, err := ReadAPK(t.TempDir(), func(string) {})
	asFormatError(t, err)

	_, err = ReadAPK(filepath.Join(t.TempDir(), "missing.apk"), func(string) {})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadAPKBadEntry(t *testing.T) {
	bad := buildDEX(dexSpec{}, []byte("a"), []byte("b"))
	binary.LittleEndian.PutUint32(bad[0x74:], 0xFFFFFF)
	apk := buildZip(t,
		zipEntry{name: "classes.dex", data: buildDEX(dexSpec{}, []byte("good"))},
		zipEntry{name: "classes2.dex", data: bad},
		zipEntry{name: "classes3.dex", data: buildDEX(dexSpec{}, []byte("after"))},
	)
	p := writeTemp(t, "app.apk", apk)
	var got []string
	n, err := ReadAPK(p, collect(&got))
	fe := asFormatError(t, err)
	if fe.Entry != "classes2.dex" || fe.Path != p || fe.Offset != 0x74 {
		t.Errorf("error %+v", fe)
	}
	if want := []string{"good", "a", "after"}; n != 3 || !slices.Equal(got, want) {
		t.Errorf("got %d %q, want %q", n, got, want)
	}
	t.Log(fe)
}

// patchCentral sets the CRC or the uncompressed size of the first entry in
// the central directory of a zip archive.
func patchCentral(t *testing.T, z []byte, field int, v uint32) []byte {
	t.Helper()
	i := bytes.Index(z, []byte("PK\x01\x02"))
	if i < 0 {
		t.Fatal("no central directory")
	}
	z = bytes.Clone(z)
	binary.LittleEndian.PutUint32(z[i+field:], v)
	return z
}

func TestReadAPKCorruptEntry(t *testing.T) {
	z := buildZip(t, zipEntry{name: "classes.dex", data: buildDEX(dexSpec{}, []byte("x"))})
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"crc":  {patchCentral(t, z, 16, 0xDEADBEEF), "damaged entry: zip: checksum error, after "},
		"huge": {patchCentral(t, z, 24, 0xFFFFFFF0), "entry of 4294967280 bytes is larger than the 512 MiB limit"},
	} {
		_, err := ReadAPK(writeTemp(t, "app.apk", c.data), func(string) {})
		fe := asFormatError(t, err)
		if fe.Entry != "classes.dex" || !strings.Contains(fe.Error(), c.want) || fe.Offset != -1 {
			t.Errorf("%s: %v (offset %d), want an error in classes.dex saying %q, with no offset (one within the entry's content means nothing to a user)", name, fe, fe.Offset, c.want)
		}
	}
}

func fixtureClassStrings(t *testing.T, name string) []string {
	t.Helper()
	var strs []string
	if _, err := ReadClass(readFixture(t, name), collect(&strs)); err != nil {
		t.Fatal(err)
	}
	return strs
}

func TestReadJARFixture(t *testing.T) {
	var strs []string
	n, err := ReadJAR(filepath.Join("testdata", "hello.jar"), collect(&strs))
	if err != nil {
		t.Fatal(err)
	}
	if n != len(strs) {
		t.Fatalf("returned %d, emitted %d", n, len(strs))
	}
	set := toSet(strs)
	for _, want := range []string{"module-info", "fixture/Hello", "fixture/Hello$Inner", "fixture", "smile \U0001F600", "inner", "mDestroyed"} {
		if !set[want] {
			t.Errorf("missing %q", want)
		}
	}
	// The Hello.class entry gives its derived name, then its pool.
	hello := fixtureClassStrings(t, "Hello.class")
	i := slices.Index(strs, "fixture/Hello")
	if i < 0 || !slices.Equal(strs[i+1:i+1+len(hello)], hello) {
		t.Errorf("Hello.class strings not found in order")
	}
}

func TestReadJARClassFile(t *testing.T) {
	var strs []string
	n, err := ReadJAR(filepath.Join("testdata", "Hello.class"), collect(&strs))
	if err != nil {
		t.Fatal(err)
	}
	if want := fixtureClassStrings(t, "Hello.class"); n != len(want) || !slices.Equal(strs, want) {
		t.Errorf("got %d strings, want %d", n, len(want))
	}
}

func TestReadJARDirectory(t *testing.T) {
	dir := t.TempDir()
	hello := readFixture(t, "Hello.class")
	write := func(rel string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("com/a/Hello.class", hello)
	write("com/a/notes.txt", []byte("ignored"))
	write("com/b/Broken.class", hello[:40])
	write("z/Last.class", hello)
	var strs []string
	n, err := ReadJAR(dir, collect(&strs))
	fe := asFormatError(t, err)
	if fe.Entry != "com/b/Broken.class" {
		t.Errorf("error %+v", fe)
	}
	set := toSet(strs)
	for _, want := range []string{"com/a/Hello", "com/b/Broken", "z/Last", "smile \U0001F600"} {
		if !set[want] {
			t.Errorf("missing %q", want)
		}
	}
	if set["ignored"] {
		t.Error("read a .txt file")
	}
	pool := len(fixtureClassStrings(t, "Hello.class"))
	if n != len(strs) || n < 2*pool+3 {
		t.Errorf("returned %d, emitted %d, one pool has %d", n, len(strs), pool)
	}
}

func TestReadAAR(t *testing.T) {
	jar := readFixture(t, "hello.jar")
	aar := buildZip(t,
		zipEntry{name: "AndroidManifest.xml", data: []byte("<manifest/>")},
		zipEntry{name: "classes.jar", data: jar, stored: true},
		zipEntry{name: "libs/extra.jar", data: jar},
		zipEntry{name: "libs/nested/skip.jar", data: jar},
		zipEntry{name: "R.txt", data: []byte("int id x 0x1")},
	)
	var fromJar []string
	if _, err := ReadJAR(filepath.Join("testdata", "hello.jar"), collect(&fromJar)); err != nil {
		t.Fatal(err)
	}
	var strs []string
	n, err := ReadJAR(writeTemp(t, "lib.aar", aar), collect(&strs))
	if err != nil {
		t.Fatal(err)
	}
	if want := append(slices.Clone(fromJar), fromJar...); n != len(want) || !slices.Equal(strs, want) {
		t.Errorf("got %d strings, want %d (classes.jar and libs/extra.jar)", n, len(want))
	}
}

func TestReadAARBadNested(t *testing.T) {
	aar := buildZip(t,
		zipEntry{name: "classes.jar", data: []byte("not a jar")},
		zipEntry{name: "libs/a.jar", data: readFixture(t, "hello.jar")},
	)
	n, err := ReadJAR(writeTemp(t, "lib.aar", aar), func(string) {})
	fe := asFormatError(t, err)
	if fe.Entry != "classes.jar" || n == 0 {
		t.Errorf("n %d, error %+v", n, fe)
	}
}

func TestReadJARNestedBadClass(t *testing.T) {
	inner := buildZip(t, zipEntry{name: "a/B.class", data: []byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0}})
	aar := buildZip(t, zipEntry{name: "classes.jar", data: inner})
	var strs []string
	_, err := ReadJAR(writeTemp(t, "lib.aar", aar), collect(&strs))
	fe := asFormatError(t, err)
	if fe.Entry != "classes.jar!/a/B.class" {
		t.Errorf("error %+v", fe)
	}
	if !slices.Equal(strs, []string{"a/B"}) {
		t.Errorf("got %q", strs)
	}
}

func TestReadJmodFixture(t *testing.T) {
	hello := readFixture(t, "Hello.class")
	z := buildZip(t,
		zipEntry{name: "classes/module-info.class", data: hello},
		zipEntry{name: "classes/fixture/Hello.class", data: hello},
		zipEntry{name: "lib/libx.so", data: []byte("\x7fELF")},
		zipEntry{name: "bin/Other.class", data: []byte("not read")},
	)
	var strs []string
	_, err := ReadJAR(writeTemp(t, "x.jmod", append([]byte(jmodMagic), z...)), collect(&strs))
	if err != nil {
		t.Fatal(err)
	}
	set := toSet(strs)
	if !set["fixture/Hello"] || !set["module-info"] || set["bin/Other"] || set["classes/fixture/Hello"] {
		t.Errorf("derived names wrong: %q", strs)
	}
}

func TestClassNameOf(t *testing.T) {
	for _, tt := range []struct {
		entry string
		jmod  bool
		want  string
	}{
		{"com/a/B.class", false, "com/a/B"},
		{"com/a/B$1.class", false, "com/a/B$1"},
		{"META-INF/versions/11/com/a/B.class", false, "com/a/B"},
		{"META-INF/versions/x/com/a/B.class", false, "META-INF/versions/x/com/a/B"},
		{"BOOT-INF/classes/com/a/B.class", false, "com/a/B"},
		{"WEB-INF/classes/com/a/B.class", false, "com/a/B"},
		{"classes/java/lang/String.class", true, "java/lang/String"},
		{"lib/x.class", true, ""},
		{"com/a/B.txt", false, ""},
		{".class", false, ""},
	} {
		got, ok := classNameOf(tt.entry, tt.jmod)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("classNameOf(%q, %v) = %q, %v; want %q", tt.entry, tt.jmod, got, ok, tt.want)
		}
	}
}

func TestReadJARErrors(t *testing.T) {
	_, err := ReadJAR(writeTemp(t, "x.jar", []byte("plain text")), func(string) {})
	asFormatError(t, err)
	_, err = ReadJAR(writeTemp(t, "x.jmod", []byte(jmodMagic+"garbage")), func(string) {})
	asFormatError(t, err)
	_, err = ReadJAR(filepath.Join(t.TempDir(), "missing.jar"), func(string) {})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// A broken class does not stop the next one.
	jar := buildZip(t,
		zipEntry{name: "a/Bad.class", data: []byte("\xCA\xFE\xBA\xBEjunk")},
		zipEntry{name: "a/Good.class", data: readFixture(t, "Hello.class")},
	)
	var strs []string
	_, err = ReadJAR(writeTemp(t, "x.jar", jar), collect(&strs))
	fe := asFormatError(t, err)
	if fe.Entry != "a/Bad.class" || !toSet(strs)["smile \U0001F600"] {
		t.Errorf("error %+v, strings %q", fe, strs)
	}
}

func TestReadStringsFile(t *testing.T) {
	p := writeTemp(t, "names.txt", []byte("\xEF\xBB\xBFfirst\r\nsecond\n\n\r\n  spaced \nlast"))
	var got []string
	n, err := ReadStringsFile(p, collect(&got))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"first", "second", "  spaced ", "last"}; n != 4 || !slices.Equal(got, want) {
		t.Errorf("got %d %q, want %q", n, got, want)
	}
	if _, err := ReadStringsFile(filepath.Join(t.TempDir(), "none.txt"), func(string) {}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadStringsFileLongLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 17 MiB file")
	}
	data := append([]byte("ok\n"), bytes.Repeat([]byte("x"), maxLineSize+1)...)
	n, err := ReadStringsFile(writeTemp(t, "long.txt", data), func(string) {})
	fe := asFormatError(t, err)
	if n != 1 || fe.Offset != 3 || !strings.Contains(fe.Msg, "line 2") {
		t.Errorf("n %d, err %v", n, fe)
	}
}

// overlapZip returns a zip archive whose central directory lists the one
// entry of z copies times, all pointing at the same compressed bytes.
func overlapZip(t *testing.T, z []byte, copies int) []byte {
	t.Helper()
	cd := bytes.Index(z, []byte("PK\x01\x02"))
	eocd := bytes.LastIndex(z, []byte("PK\x05\x06"))
	if cd < 0 || eocd < 0 {
		t.Fatal("not a zip")
	}
	rec := z[cd:eocd]
	out := bytes.Clone(z[:cd])
	for range copies {
		out = append(out, rec...)
	}
	end := bytes.Clone(z[eocd:])
	binary.LittleEndian.PutUint16(end[8:], uint16(copies))
	binary.LittleEndian.PutUint16(end[10:], uint16(copies))
	binary.LittleEndian.PutUint32(end[12:], uint32(copies*len(rec)))
	return append(out, end...)
}

func TestOverlappingEntries(t *testing.T) {
	dex := buildDEX(dexSpec{}, bytes.Repeat([]byte("q"), 500))
	apk := overlapZip(t, buildZip(t, zipEntry{name: "classes.dex", data: dex, stored: true}), 4)
	count := 0
	_, err := ReadAPK(writeTemp(t, "bomb.apk", apk), func(string) { count++ })
	fe := asFormatError(t, err)
	if !strings.Contains(fe.Msg, "overlap") || count != 1 {
		t.Errorf("count %d, err %v", count, fe)
	}

	jar := overlapZip(t, buildZip(t, zipEntry{name: "a/B.class", data: readFixture(t, "Hello.class"), stored: true}), 4)
	_, err = ReadJAR(writeTemp(t, "bomb.jar", jar), func(string) {})
	fe = asFormatError(t, err)
	if !strings.Contains(fe.Msg, "overlap") {
		t.Errorf("err %v", fe)
	}
}

// TestReadAPKInflateBounded: entries that inflate to far more than their
// archive (two DEX files of 40 MiB of one repeated string, 80 KB
// deflated) are refused once they pass 32 times the archive's size and 64
// MiB, as a zip bomb, naming the entry; the first entry's strings are
// still emitted.
func TestReadAPKInflateBounded(t *testing.T) {
	s := bytes.Repeat([]byte("a"), 40<<20)
	apk := buildZip(t,
		zipEntry{name: "classes.dex", data: buildDEX(dexSpec{}, s)},
		zipEntry{name: "classes2.dex", data: buildDEX(dexSpec{}, s)},
	)
	t.Logf("%d bytes of APK", len(apk))
	n, err := ReadAPK(writeTemp(t, "bomb.apk", apk), func(string) {})
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Entry != "classes2.dex" || !strings.Contains(fe.Msg, "zip bomb") {
		t.Fatalf("error %v, want a zip bomb in classes2.dex", err)
	}
	if n != 1 {
		t.Errorf("%d strings emitted, want the first entry's 1", n)
	}
}
