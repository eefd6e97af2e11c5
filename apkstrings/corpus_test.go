package apkstrings

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heapcrunch/heapcrunch/internal/testutil"
	"github.com/heapcrunch/heapcrunch/names"
)

// Facts from ../shared/corpus/README.md.
var corpusDEX = []struct {
	file    string
	strings int
}{
	{"dex-jadx-hello.dex", 14},
	{"dex-art-dexdump-invoke-custom.dex", 478},
	{"dex-art-dexdump-const-method-handle.dex", 57},
	{"dex-art-836-32768classes.dex", 65552},
}

func readCorpusDEX(t *testing.T, name string) (strs []string, headerCount uint32) {
	t.Helper()
	p := corpusFile(t, name)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	var hdr [0x40]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		t.Fatal(err)
	}
	n, err := ReadDEX(f, fi.Size(), collect(&strs))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if n != len(strs) {
		t.Fatalf("%s: returned %d, emitted %d", name, n, len(strs))
	}
	return strs, binary.LittleEndian.Uint32(hdr[0x38:])
}

func TestCorpusDEXCounts(t *testing.T) {
	for _, c := range corpusDEX {
		t.Run(c.file, func(t *testing.T) {
			strs, hc := readCorpusDEX(t, c.file)
			if len(strs) != int(hc) || len(strs) != c.strings {
				t.Errorf("got %d strings; header string_ids_size %d, README says %d", len(strs), hc, c.strings)
			}
			for i, s := range strs {
				if !utf8.ValidString(s) {
					t.Errorf("string %d %q is not valid UTF-8", i, s)
				}
			}
		})
	}
}

func TestCorpusDEXContent(t *testing.T) {
	strs, _ := readCorpusDEX(t, "dex-jadx-hello.dex")
	set := toSet(strs)
	for _, want := range []string{"LHelloWorld;", "Hello, World!", "main", "<init>", "Ljava/io/PrintStream;", "println", "HelloWorld.java"} {
		if !set[want] {
			t.Errorf("missing %q in %q", want, strs)
		}
	}
}

func TestCorpusAPK(t *testing.T) {
	for _, c := range []struct {
		file string
		want int
	}{
		{"apk-jadx-small.apk", 22},
		{"apk-jetnews-release.apk", 9949},
		{"apk-androidbinary-helloworld-nodex.apk", 0},
	} {
		t.Run(c.file, func(t *testing.T) {
			p := corpusFile(t, c.file)
			var strs []string
			n, err := ReadAPK(p, collect(&strs))
			if err != nil {
				t.Fatal(err)
			}
			if n != c.want || len(strs) != c.want {
				t.Errorf("got %d (%d emitted), want %d", n, len(strs), c.want)
			}
		})
	}
}

func TestCorpusAPKContent(t *testing.T) {
	p := corpusFile(t, "apk-jadx-small.apk")
	var strs []string
	if _, err := ReadAPK(p, collect(&strs)); err != nil {
		t.Fatal(err)
	}
	if !toSet(strs)["Lio/github/skylot/android/smallapp/MainActivity;"] {
		t.Errorf("MainActivity descriptor missing from %q", strs)
	}
}

func TestCorpusJAR(t *testing.T) {
	p := corpusFile(t, "jar-debian-commons-lang3-3.12.0.jar")
	var strs []string
	n, err := ReadJAR(p, collect(&strs))
	if err != nil {
		t.Fatal(err)
	}
	if n != len(strs) {
		t.Fatalf("returned %d, emitted %d", n, len(strs))
	}
	set := toSet(strs)
	for _, want := range []string{
		"org/apache/commons/lang3/StringUtils",
		"org/apache/commons/lang3/builder/ToStringStyle$JsonToStringStyle",
		"isBlank", "EMPTY", "INDEX_NOT_FOUND", "(Ljava/lang/CharSequence;)Z",
		"Ljava/lang/String;", "<init>", "SourceFile",
	} {
		if !set[want] {
			t.Errorf("missing %q", want)
		}
	}

	// The count is one derived name per .class entry plus each class's
	// CONSTANT_Utf8 entries.
	zr, err := zip.OpenReader(p)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	want, classes := 0, 0
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".class") {
			continue
		}
		classes++
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(rc); err != nil {
			t.Fatal(err)
		}
		rc.Close()
		k, err := ReadClass(buf.Bytes(), func(string) {})
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		want += 1 + k
		if !set[strings.TrimSuffix(f.Name, ".class")] {
			t.Errorf("derived name of %s missing", f.Name)
		}
	}
	if classes != 362 {
		t.Errorf("%d class entries, README says 362", classes)
	}
	if n != want {
		t.Errorf("ReadJAR returned %d, want %d", n, want)
	}
}

// TestCorpusDexdump compares ReadDEX with the dexdump tool: every class
// descriptor, superclass, interface, field and method name, field type,
// source file and string literal that dexdump prints must be among our
// strings, and a literal must be at the index dexdump gives.
func TestCorpusDexdump(t *testing.T) {
	dexdump, err := exec.LookPath("dexdump")
	if err != nil {
		testutil.Skip(t, "dexdump not installed (Debian package dexdump)")
	}
	files := []string{"apk-jadx-small.apk", "apk-jetnews-release.apk"}
	for _, c := range corpusDEX {
		files = append(files, c.file)
	}
	quoted := regexp.MustCompile(`^\s*(?:Class descriptor|Superclass|name|type|#\d+)\s*: '(.*)'$`)
	literal := regexp.MustCompile(`const-string(?:/jumbo)? v\d+, "(.*)" // string@([0-9a-f]+)$`)
	source := regexp.MustCompile(`^\s*source_file_idx\s*: (\d+) \((.*)\)$`)
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			p := corpusFile(t, name)
			var strs []string
			if strings.HasSuffix(name, ".apk") {
				if _, err := ReadAPK(p, collect(&strs)); err != nil {
					t.Fatal(err)
				}
			} else {
				strs, _ = readCorpusDEX(t, name)
			}
			set := toSet(strs)
			out, err := exec.Command(dexdump, "-d", p).Output()
			if err != nil {
				t.Fatalf("dexdump: %v", err)
			}
			checked, literals, missing := 0, 0, 0
			sc := bufio.NewScanner(bytes.NewReader(out))
			sc.Buffer(nil, 64<<20)
			for sc.Scan() {
				line := sc.Text()
				if m := quoted.FindStringSubmatch(line); m != nil {
					v := m[1]
					if strings.HasPrefix(v, "(") || strings.HasPrefix(v, "in ") {
						continue // a method prototype: not one string
					}
					checked++
					if !set[names.NormalizeString(v)] {
						missing++
						if missing < 10 {
							t.Errorf("dexdump shows %q, not among our strings", v)
						}
					}
					continue
				}
				if m := source.FindStringSubmatch(line); m != nil {
					checked++
					if !set[m[2]] {
						t.Errorf("source file %q missing", m[2])
					}
					continue
				}
				if m := literal.FindStringSubmatch(line); m != nil && !strings.HasSuffix(name, ".apk") {
					idx, _ := strconv.ParseUint(m[2], 16, 32)
					v := names.NormalizeString(m[1])
					literals++
					if int(idx) >= len(strs) || strs[idx] != v {
						missing++
						if missing < 10 {
							t.Errorf("string@%04x: dexdump %q, ours %q", idx, v, strs[min(int(idx), len(strs)-1)])
						}
					}
				} else if m != nil {
					literals++
					if !set[names.NormalizeString(m[1])] {
						missing++
						if missing < 10 {
							t.Errorf("literal %q missing", m[1])
						}
					}
				}
			}
			if checked == 0 {
				t.Fatalf("no names found in dexdump output:\n%.2000s", out)
			}
			t.Logf("%d names and %d literals checked against dexdump, %d missing", checked, literals, missing)
		})
	}
}

func TestJmod(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the JDK's java.base.jmod; skipped in -short mode")
	}
	matches, _ := filepath.Glob("/usr/lib/jvm/*/jmods/java.base.jmod")
	if len(matches) == 0 {
		testutil.Skip(t, "no JDK java.base.jmod under /usr/lib/jvm/*/jmods")
	}
	want := map[string]bool{"java/lang/String": false, "value": false, "hashCode": false, "java/util/HashMap$Node": false}
	n, err := ReadJAR(matches[0], func(s string) {
		if _, ok := want[s]; ok {
			want[s] = true
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for s, found := range want {
		if !found {
			t.Errorf("%s: %q not found", matches[0], s)
		}
	}
	t.Logf("%s: %d strings", matches[0], n)
}
