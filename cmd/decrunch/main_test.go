package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/clitest"
	"github.com/heapcrunch/heapcrunch/internal/compress"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
	"github.com/heapcrunch/heapcrunch/internal/version"
)

var (
	decrunchBin string
	src         []byte // a small HPROF dump cut from testdata/sample.hprof.gz
	good        []byte // its BMD
	bigBMD      []byte // the BMD of the whole sample dump
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "decrunch-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		if decrunchBin, err = clitest.Build(dir, "cmd/decrunch"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

func crunchBytes(t *testing.T, in []byte, opt crunch.Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := crunch.Crunch(bytes.NewReader(in), &b, opt); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func fixtures(t *testing.T) {
	t.Helper()
	if good != nil {
		return
	}
	full := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	var err error
	if src, err = fuzzseed.Sample(full); err != nil {
		t.Fatal(err)
	}
	good = crunchBytes(t, src, crunch.Options{})
	bigBMD = crunchBytes(t, full, crunch.Options{})
}

func compressed(t *testing.T, k compress.Kind, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := compress.NewWriter(&out, k)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// isHPROF checks that b is an HPROF file that reads back whole.
func isHPROF(t *testing.T, b []byte) {
	t.Helper()
	r, err := hprof.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("output is not HPROF: %v", err)
	}
	var s hprof.SubRecord
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("output HPROF does not read back: %v", err)
		}
		for rec.Tag.IsHeapDump() {
			if err := r.NextSub(&s); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("output HPROF does not read back: %v", err)
			}
		}
	}
}

// recordOffset returns the offset of the n-th record of a BMD file.
func recordOffset(t *testing.T, b []byte, n int) int64 {
	t.Helper()
	r, err := bmd.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var prev int64 = -1
	for i := 0; ; {
		rec, err := r.Next()
		if err != nil {
			t.Fatalf("record %d: %v", n, err)
		}
		if rec.Offset != prev && rec.Kind != bmd.KindRoot && rec.Kind != bmd.KindHashedString { // not inside a run
			if i == n {
				return rec.Offset
			}
			i++
		}
		prev = rec.Offset
	}
}

func pngBytes() []byte {
	return []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
}

func zipBytes(t *testing.T, name string, data []byte) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	w, _ := z.Create(name)
	w.Write(data)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestBadInput: every kind of bad BMD input fails with exit code 1, a
// message that names the file and says what and where, no Go trace, and no
// output or temporary file left behind.
func TestBadInput(t *testing.T) {
	fixtures(t)
	corrupt := bytes.Clone(bigBMD)
	at := recordOffset(t, corrupt, 2000)
	corrupt[at] = 0x7F
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(src)
	zw.Close()
	zst := compressed(t, compress.Zstd, bigBMD)
	cases := []struct {
		name    string
		file    string
		data    []byte
		mention []string
	}{
		{"missing", "missing.bmd", nil, []string{"missing.bmd", "no such file"}},
		{"empty", "empty.bmd", []byte{}, []string{"empty.bmd", "empty file"}},
		{"truncated", "cut.bmd", bigBMD[:len(bigBMD)/2], []string{"cut.bmd", "truncated", "offset"}},
		{"truncated before END", "noend.bmd", good[:len(good)-3], []string{"noend.bmd", "truncated", "END", "offset"}},
		{"truncated header", "cut-header.bmd", good[:3], []string{"cut-header.bmd", "truncated", "offset"}},
		{"corrupt", "corrupt.bmd", corrupt, []string{"corrupt.bmd", "unknown record tag 127", fmt.Sprintf("offset %d", at)}},
		{"unknown version", "v99.bmd", []byte{99, 0}, []string{"v99.bmd", "version 99"}},
		{"truncated zstd", "cut.bmd.zst", zst[:len(zst)/2], []string{"cut.bmd.zst", "offset"}},
		{"HPROF", "dump.hprof", src, []string{"dump.hprof", "not a BMD file", "HPROF heap dump", "crunch"}},
		{"gzip HPROF", "dump.hprof.gz", gz.Bytes(), []string{"dump.hprof.gz", "not a BMD file", "HPROF heap dump"}},
		{"PNG", "picture.png", pngBytes(), []string{"picture.png", "not a BMD file", "PNG image"}},
		{"zip", "app.apk", zipBytes(t, "classes.dex", []byte("dex\n035\x00")), []string{"app.apk", "not a BMD file", "zip archive"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := clitest.NewDir(t)
			if c.data != nil {
				d.Write(t, c.file, c.data)
			}
			before := d.Files(t)
			r := d.Run(t, nil, decrunchBin, c.file, "-o", "out.hprof")
			clitest.ExpectFail(t, d, r, 1, "decrunch", before, c.mention...)
			t.Logf("%s", strings.TrimSpace(r.Stderr))
		})
	}
	t.Run("directory", func(t *testing.T) {
		d := clitest.NewDir(t)
		os.Mkdir(filepath.Join(d.Path, "folder"), 0o755)
		before := d.Files(t)
		r := d.Run(t, nil, decrunchBin, "folder", "-o", "out.hprof")
		clitest.ExpectFail(t, d, r, 1, "decrunch", before, "folder", "is a directory")
	})
}

// TestBadNameSource: each name source given a missing file, an empty file
// or a file of the wrong kind fails with exit code 1 and a message naming
// the flag and the file, and writes nothing.
func TestBadNameSource(t *testing.T) {
	fixtures(t)
	wrong := map[string][]byte{
		"apk":     pngBytes(),
		"dex":     zipBytes(t, "a.txt", []byte("hello")),
		"jar":     src, // an HPROF dump
		"strings": pngBytes(),
		"mapping": zipBytes(t, "mapping.txt", []byte("a.B -> c:\n")),
	}
	for _, flag := range []string{"apk", "dex", "jar", "strings", "mapping"} {
		for _, kind := range []string{"missing", "empty", "wrong kind"} {
			t.Run(flag+" "+kind, func(t *testing.T) {
				d := clitest.NewDir(t)
				d.Write(t, "in.bmd", good)
				file := "source." + flag
				want := []string{"--" + flag + " " + file}
				switch kind {
				case "missing":
					want = append(want, "no such file")
				case "empty":
					d.Write(t, file, []byte{})
					want = append(want, "empty file")
				default:
					d.Write(t, file, wrong[flag])
				}
				before := d.Files(t)
				r := d.Run(t, nil, decrunchBin, "in.bmd", "--"+flag, file, "-o", "out.hprof")
				clitest.ExpectFail(t, d, r, 1, "decrunch", before, want...)
				t.Logf("%s", strings.TrimSpace(r.Stderr))
			})
		}
	}
}

// TestUsage: calling the command wrongly exits with 2 and a one-line
// message, and writes nothing.
func TestUsage(t *testing.T) {
	fixtures(t)
	for _, args := range [][]string{
		{},
		{"-o", "out.hprof"},
		{"in.bmd", "other.bmd", "-o", "out.hprof"},
		{"--no-such-flag", "in.bmd", "-o", "out.hprof"},
		{"in.bmd", "-o", "out.hprof", "--no-such-flag"},
		{"in.bmd", "-o"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			d := clitest.NewDir(t)
			d.Write(t, "in.bmd", good)
			before := d.Files(t)
			r := d.Run(t, nil, decrunchBin, args...)
			clitest.ExpectFail(t, d, r, 2, "decrunch", before, "decrunch --help")
		})
	}
}

// TestOutputRules: an existing output is kept unless --force; the input is
// never overwritten.
func TestOutputRules(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	d.Write(t, "in.bmd", good)
	d.Write(t, "out.hprof", []byte("precious"))
	before := d.Files(t)
	r := d.Run(t, nil, decrunchBin, "in.bmd", "-o", "out.hprof")
	clitest.ExpectFail(t, d, r, 2, "decrunch", before, "out.hprof", "exists", "--force")
	if string(d.Read(t, "out.hprof")) != "precious" {
		t.Fatal("existing output changed")
	}
	for _, args := range [][]string{{"in.bmd", "-o", "in.bmd"}, {"-f", "in.bmd", "-o", "./in.bmd"}} {
		r := d.Run(t, nil, decrunchBin, args...)
		clitest.ExpectFail(t, d, r, 2, "decrunch", before, "is the input")
		if !bytes.Equal(d.Read(t, "in.bmd"), good) {
			t.Fatalf("%v: input changed", args)
		}
	}
	clitest.ExpectOK(t, d.Run(t, nil, decrunchBin, "--force", "in.bmd", "-o", "out.hprof"))
	isHPROF(t, d.Read(t, "out.hprof"))
}

// TestSuccess covers standard input and output, --quiet, --help,
// --version, flags after the input, name sources, compressed input found by
// content, and --salvage.
func TestSuccess(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	d.Write(t, "in.bmd", good)
	d.Write(t, "disguised.bmd", compressed(t, compress.Gzip, good))
	d.Write(t, "in.bmd.zst", compressed(t, compress.Zstd, good))
	d.Write(t, "names.txt", []byte("java.lang.Object\nSample\n"))
	d.Write(t, "mapping.txt", []byte("# comment\nSample -> a:\n    int x -> a\n"))
	clitest.Copy(t, filepath.Join(d.Path, "hello.jar"), filepath.Join(testutil.Root(), "apkstrings", "testdata", "hello.jar"))

	r := d.Run(t, nil, decrunchBin, "--quiet", "in.bmd", "-o", "a.hprof")
	clitest.ExpectOK(t, r)
	if r.Stderr != "" || r.Stdout != "" {
		t.Fatalf("--quiet printed %q %q", r.Stderr, r.Stdout)
	}
	want := d.Read(t, "a.hprof")
	isHPROF(t, want)

	t.Run("stdout", func(t *testing.T) {
		for _, args := range [][]string{{"in.bmd"}, {"in.bmd", "-o", "-"}} {
			r := d.Run(t, nil, decrunchBin, args...)
			clitest.ExpectOK(t, r)
			if r.Stdout != string(want) {
				t.Fatalf("%v: standard output differs", args)
			}
		}
	})
	t.Run("stdin", func(t *testing.T) {
		r := d.Run(t, good, decrunchBin, "-", "-o", "stdin.hprof")
		clitest.ExpectOK(t, r)
		if !bytes.Equal(d.Read(t, "stdin.hprof"), want) {
			t.Fatal("decrunch from standard input differs")
		}
	})
	t.Run("compressed by content", func(t *testing.T) {
		for _, in := range []string{"disguised.bmd", "in.bmd.zst"} {
			r := d.Run(t, nil, decrunchBin, in, "-o", "-")
			clitest.ExpectOK(t, r)
			if r.Stdout != string(want) {
				t.Fatalf("%s: output differs", in)
			}
		}
	})
	t.Run("flags after the input", func(t *testing.T) {
		for i, args := range [][]string{
			{"in.bmd", "--jar", "hello.jar", "-o", "f1.hprof"},
			{"in.bmd", "-o", "f2.hprof", "--strings", "names.txt", "--mapping", "mapping.txt", "--stats"},
			{"--jar", "hello.jar", "in.bmd", "--strings=names.txt", "-o", "f3.hprof"},
		} {
			r := d.Run(t, nil, decrunchBin, args...)
			clitest.ExpectOK(t, r)
			isHPROF(t, d.Read(t, fmt.Sprintf("f%d.hprof", i+1)))
			if strings.Contains(strings.Join(args, " "), "--stats") && !strings.Contains(r.Stderr, "candidates:") {
				t.Fatalf("--stats: %q", r.Stderr)
			}
		}
		apk := filepath.Join(testutil.Root(), "..", "shared", "corpus", "apk-jadx-small.apk")
		if _, err := os.Stat(apk); err != nil {
			t.Logf("no corpus APK: --apk after the input not tried")
			return
		}
		clitest.Copy(t, filepath.Join(d.Path, "x.apk"), apk)
		clitest.ExpectOK(t, d.Run(t, nil, decrunchBin, "in.bmd", "--apk", "x.apk", "-o", "apk.hprof"))
		isHPROF(t, d.Read(t, "apk.hprof"))
	})
	t.Run("salvage", func(t *testing.T) {
		d.Write(t, "cut.bmd", bigBMD[:len(bigBMD)*3/4])
		r := d.Run(t, nil, decrunchBin, "--salvage", "cut.bmd", "-o", "salvaged.hprof")
		clitest.ExpectOK(t, r)
		if !strings.Contains(r.Stderr, "salvaged") || !strings.Contains(r.Stderr, "cut.bmd") {
			t.Fatalf("salvage does not say what was lost: %q", r.Stderr)
		}
		isHPROF(t, d.Read(t, "salvaged.hprof"))
		r = d.Run(t, nil, decrunchBin, "--salvage", "--quiet", "cut.bmd", "-o", "salvaged2.hprof")
		clitest.ExpectOK(t, r)
		if r.Stderr != "" {
			t.Fatalf("--quiet printed %q", r.Stderr)
		}
	})
	t.Run("help", func(t *testing.T) {
		r := d.Run(t, nil, decrunchBin, "--help")
		clitest.ExpectOK(t, r)
		for _, s := range []string{"Examples:", "decrunch dump.bmd --apk app.apk -o dump.hprof", "Exit codes", "--mapping"} {
			if !strings.Contains(r.Stdout, s) {
				t.Fatalf("--help does not show %q:\n%s", s, r.Stdout)
			}
		}
	})
	t.Run("version", func(t *testing.T) {
		r := d.Run(t, nil, decrunchBin, "--version")
		clitest.ExpectOK(t, r)
		if !strings.Contains(r.Stdout, version.Version) {
			t.Fatalf("--version printed %q", r.Stdout)
		}
	})
}

// TestInterrupt: Ctrl-C while decrunch waits for input removes the
// temporary output file.
func TestInterrupt(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	before := d.Files(t)
	cmd := d.Command(t.Context(), decrunchBin, "-", "-o", "out.hprof")
	pw, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Write(bigBMD[:len(bigBMD)/2]) // and keep the pipe open
	deadline := time.Now().Add(20 * time.Second)
	for {
		if ents, _ := os.ReadDir(d.Path); len(ents) > 0 {
			break // the temporary output exists
		}
		if time.Now().After(deadline) {
			t.Fatal("decrunch did not create its temporary output")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	pw.Close()
	if cmd.ProcessState.ExitCode() != 130 {
		t.Errorf("exit after SIGINT: %v (stderr %q)", err, stderr.String())
	}
	if after := d.Files(t); len(after) != len(before) {
		t.Errorf("left behind after SIGINT: %v", after)
	}
}

// TestV1PrimitiveArrayNamesBuiltIn: the original 2014 cruncher hashed the
// names of primitive array classes ("[I"); decrunch recovers them without
// any name source, since analyzers need them to recognise primitive arrays
// (VisualVM refuses a dump whose int[] class has no name it knows).
func TestV1PrimitiveArrayNamesBuiltIn(t *testing.T) {
	var buf bytes.Buffer
	w, err := bmd.NewV1Writer(&buf, []byte("JAVA PROFILE 1.0.2"))
	if err != nil {
		t.Fatal(err)
	}
	w.String(1, []byte("java.lang.Object"))
	w.HashedString(2, 2, bmd.JavaHash("[I"))
	w.Class(&bmd.V1Class{ID: 1, Name: 1})
	w.Class(&bmd.V1Class{ID: 2, Super: 1, Name: 2})
	w.PrimitiveArray(3, bmd.Int, 5)
	w.RootObjects([]uint32{3})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	d := clitest.NewDir(t)
	d.Write(t, "orig.bmd", buf.Bytes())
	r := d.Run(t, nil, decrunchBin, "--quiet", "orig.bmd", "-o", "out.hprof")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	out := d.Read(t, "out.hprof")
	isHPROF(t, out)
	if !bytes.Contains(out, []byte("[I")) || bytes.Contains(out, []byte("unknown$")) {
		t.Errorf("the int[] class name was not recovered from the built-in names")
	}
}
