package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/clitest"
	"github.com/heapcrunch/heapcrunch/internal/compress"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
	"github.com/heapcrunch/heapcrunch/internal/version"
	"github.com/heapcrunch/heapcrunch/names"
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
	if err := heapstat.ReadAll(b); err != nil {
		t.Fatalf("output is not an HPROF file that reads back: %v", err)
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

// TestHeapAdvisedFirst: run waits for main's advice of the Go heap for
// huge pages (heapAdvised) once, before it makes the output (and, in its
// code, before it loads names and converts), so that their allocations
// land in the advised range; a command line that run refuses, or --info,
// which writes no file, does not wait.
func TestHeapAdvisedFirst(t *testing.T) {
	fixtures(t)
	dir := t.TempDir()
	in, out, names := filepath.Join(dir, "in.bmd"), filepath.Join(dir, "out.hprof"), filepath.Join(dir, "names.txt")
	if err := os.WriteFile(in, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(names, []byte("com.example.Thing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waits := clitest.CountWaits(t, &heapAdvised, out)
	if err := app().Run([]string{"decrunch", "-q", "--strings", names, "-o", out, in}); err != nil {
		t.Fatalf("decrunch in the test's process: %v", err)
	}
	if *waits != 1 {
		t.Errorf("run waited for the heap's advice %d times, want 1", *waits)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("no output after the run: %v", err)
	}
	for _, c := range []struct {
		args []string
		ok   bool
	}{{[]string{"decrunch", "-q", in, out}, false}, {[]string{"decrunch", "--info", in}, true}} {
		*waits = 0
		devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		stdout := os.Stdout
		os.Stdout = devNull // --info's report
		err = app().Run(c.args)
		os.Stdout = stdout
		devNull.Close()
		if (err == nil) != c.ok {
			t.Errorf("%q: error %v, want one: %v", c.args, err, !c.ok)
		}
		if *waits != 0 {
			t.Errorf("%q waited for the heap's advice %d times, want 0", c.args, *waits)
		}
	}
}

// TestBadInput: every kind of bad BMD input fails with exit code 1, a
// message that names the file and says what and where, no Go trace, and no
// output or temporary file left behind.
func TestBadInput(t *testing.T) {
	fixtures(t)
	corrupt := bytes.Clone(bigBMD)
	at := recordOffset(t, corrupt, 2000)
	corrupt[at] = 0x7F
	var noEnd bytes.Buffer // whole blocks, no END record
	if w, err := bmd.NewWriter(&noEnd, &bmd.Metadata{IDSize: 4}); err != nil || w.HeapDump(true) != nil || w.Flush() != nil {
		t.Fatal(err)
	}
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
		{"truncated before END", "noend.bmd", noEnd.Bytes(), []string{"noend.bmd", "truncated", "END", "offset"}},
		{"truncated in a block", "cutblock.bmd", good[:len(good)-3], []string{"cutblock.bmd", "truncated", "block", "cut short", "offset"}},
		{"truncated header", "cut-header.bmd", good[:3], []string{"cut-header.bmd", "truncated", "offset"}},
		{"corrupt", "corrupt.bmd", corrupt, []string{"corrupt.bmd", "checksum mismatch", "damaged", "offset"}},
		{"unknown version", "v99.bmd", []byte{99, 0}, []string{"v99.bmd", "version 99"}},
		{"truncated zstd", "cut.bmd.zst", zst[:len(zst)/2], []string{"cut.bmd.zst", "truncated or damaged zstd data", "--salvage"}},
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

// TestUsage: calling the command wrongly exits with 2, a one-line message
// that says what is wrong and what to do, and writes nothing.
func TestUsage(t *testing.T) {
	fixtures(t)
	for _, c := range []struct {
		args    []string
		mention []string
	}{
		{[]string{}, []string{"need one INPUT.bmd (got 0 arguments)"}},
		{[]string{"-o", "out.hprof"}, []string{"got 0 arguments"}},
		{[]string{"in.bmd", "out.hprof"}, []string{"the output is given with -o: decrunch in.bmd -o out.hprof", "(got 2 arguments)"}},
		{[]string{"in.bmd", "other.bmd", "-o", "out.hprof"}, []string{"need one INPUT.bmd (got 2 arguments)"}},
		{[]string{"in.bmd", "a", "b"}, []string{"need one INPUT.bmd (got 3 arguments)"}},
		{[]string{"--no-such-flag", "in.bmd", "-o", "out.hprof"}, []string{"no-such-flag"}},
		{[]string{"in.bmd", "-o", "out.hprof", "--no-such-flag"}, []string{"no-such-flag"}},
		{[]string{"in.bmd", "-o"}, []string{"-o"}},
		{[]string{"in.bmd", "-o", "folder"}, []string{"output folder is a directory"}},
		{[]string{"--label", "app=com.example", "in.bmd", "-o", "out.hprof"}, []string{"--label app=com.example", "only Build.MANUFACTURER=TEXT, Build.ID=TEXT and ApplicationInfo.processName=TEXT"}},
		{[]string{"--label", "Build.ID", "in.bmd", "-o", "out.hprof"}, []string{"--label", "Build.ID"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			d := clitest.NewDir(t)
			d.Write(t, "in.bmd", good)
			os.Mkdir(filepath.Join(d.Path, "folder"), 0o755)
			before := d.Files(t)
			r := d.Run(t, nil, decrunchBin, c.args...)
			clitest.ExpectFail(t, d, r, 2, "decrunch", before, append(c.mention, "decrunch --help")...)
		})
	}
}

// TestNameSourceKinds: a name source given with the wrong flag is a usage
// error that names the right flag; a damaged one says so without calling
// it what it is not; one that gives no names is a warning, not silence.
func TestNameSourceKinds(t *testing.T) {
	fixtures(t)
	jar, err := os.ReadFile(filepath.Join(testutil.Root(), "apkstrings", "testdata", "hello.jar"))
	if err != nil {
		t.Fatal(err)
	}
	class, err := os.ReadFile(filepath.Join(testutil.Root(), "apkstrings", "testdata", "Hello.class"))
	if err != nil {
		t.Fatal(err)
	}
	dex := []byte("dex\n035\x00 not a whole DEX file, but one by its magic")
	apk := zipBytes(t, "classes.dex", dex)
	noCode := zipBytes(t, "res/layout/main.xml", []byte("<LinearLayout/>"))
	cases := []struct {
		name    string
		files   map[string][]byte // "dir/" makes a folder
		args    []string
		code    int
		mention []string
		not     []string
	}{
		{"--apk of a JAR", map[string][]byte{"lib.jar": jar}, []string{"--apk", "lib.jar"}, 2, []string{"--apk lib.jar: it is a JAR", "use --jar lib.jar"}, nil},
		{"--apk of a DEX file", map[string][]byte{"classes.dex": dex}, []string{"--apk", "classes.dex"}, 2, []string{"--apk classes.dex: it is a DEX file", "use --dex classes.dex"}, nil},
		{"--apk of a class file", map[string][]byte{"Hello.class": class}, []string{"--apk", "Hello.class"}, 2, []string{"use --jar Hello.class"}, nil},
		{"--apk of a folder", map[string][]byte{"classes/": nil}, []string{"--apk", "classes"}, 2, []string{"--apk classes: is a folder", "use --jar classes"}, nil},
		{"--dex of an APK", map[string][]byte{"app.apk": apk}, []string{"--dex", "app.apk"}, 2, []string{"--dex app.apk: it is an APK", "use --apk app.apk"}, nil},
		{"--dex of a JAR", map[string][]byte{"lib.jar": jar}, []string{"--dex", "lib.jar"}, 2, []string{"use --jar lib.jar"}, nil},
		{"--jar of an APK", map[string][]byte{"app.apk": apk}, []string{"--jar", "app.apk"}, 2, []string{"--jar app.apk: it is an APK", "use --apk app.apk"}, nil},
		{"--jar of a DEX file", map[string][]byte{"classes.dex": dex}, []string{"--jar", "classes.dex"}, 2, []string{"use --dex classes.dex"}, nil},
		{"--strings of an APK", map[string][]byte{"app.apk": apk}, []string{"--strings", "app.apk"}, 2, []string{"not a text file", "use --apk app.apk"}, nil},
		{"truncated APK", map[string][]byte{"cut.apk": apk[:len(apk)-10]}, []string{"--apk", "cut.apk"}, 1, []string{"--apk cut.apk: truncated or damaged zip archive"}, []string{"it is a zip archive", "not a zip archive"}},
		{"truncated JAR", map[string][]byte{"cut.jar": jar[:len(jar)/2]}, []string{"--jar", "cut.jar"}, 1, []string{"--jar cut.jar: truncated or damaged zip archive"}, []string{"it is a zip archive", "not a zip archive"}},
		{"missing --jar", nil, []string{"--jar", "nowhere"}, 1, []string{"--jar nowhere: no such file or folder"}, nil},
		{"missing --apk", nil, []string{"--apk", "nowhere.apk"}, 1, []string{"--apk nowhere.apk: no such file"}, []string{"folder"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := clitest.NewDir(t)
			d.Write(t, "in.bmd", good)
			for name, data := range c.files {
				if strings.HasSuffix(name, "/") {
					os.Mkdir(filepath.Join(d.Path, name), 0o755)
				} else {
					d.Write(t, name, data)
				}
			}
			before := d.Files(t)
			r := d.Run(t, nil, decrunchBin, append([]string{"in.bmd", "-o", "out.hprof"}, c.args...)...)
			clitest.ExpectFail(t, d, r, c.code, "decrunch", before, c.mention...)
			for _, n := range c.not {
				if strings.Contains(r.Stderr, n) {
					t.Errorf("stderr mentions %q: %q", n, r.Stderr)
				}
			}
		})
	}
	t.Run("APK without code", func(t *testing.T) {
		d := clitest.NewDir(t)
		d.Write(t, "in.bmd", good)
		d.Write(t, "res.apk", noCode)
		os.Mkdir(filepath.Join(d.Path, "empty"), 0o755)
		before := d.Files(t)
		r := d.Run(t, nil, decrunchBin, "in.bmd", "--apk", "res.apk", "--jar", "empty", "-o", "out.hprof")
		clitest.ExpectOK(t, r)
		clitest.ExpectFiles(t, d, before, "out.hprof")
		for _, w := range []string{
			"decrunch: warning: --apk res.apk: no names found in it (no classes*.dex entry",
			"decrunch: warning: --jar empty: no names found in it (no .class files)",
		} {
			if !strings.Contains(r.Stderr, w) {
				t.Errorf("stderr does not say %q: %q", w, r.Stderr)
			}
		}
		if r.Stdout != "" {
			t.Errorf("stdout: %q", clitest.Head(r.Stdout))
		}
	})
	t.Run("mapping of comments only", func(t *testing.T) {
		d := clitest.NewDir(t)
		d.Write(t, "in.bmd", good)
		d.Write(t, "mapping.txt", []byte("# compiler: R8\n# pg_map_id: 1\n"))
		d.Write(t, "real.txt", []byte("# compiler: R8\ncom.example.Main -> a:\n"))
		r := d.Run(t, nil, decrunchBin, "in.bmd", "--mapping", "mapping.txt", "-o", "out.hprof")
		clitest.ExpectOK(t, r)
		if w := "decrunch: warning: --mapping mapping.txt: no class mapping found in it"; !strings.HasPrefix(r.Stderr, w) {
			t.Errorf("stderr %q, want %q", r.Stderr, w)
		}
		r = d.Run(t, nil, decrunchBin, "-f", "in.bmd", "--mapping", "real.txt", "-o", "out.hprof")
		clitest.ExpectOK(t, r)
		if strings.Contains(r.Stderr, "no class mapping") {
			t.Errorf("warning for a mapping with a class: %q", r.Stderr)
		}
	})
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
	// Nor any other file it reads, with --force too: a name source, the
	// mapping, the BMD as standard input, standard output redirected to
	// the BMD.
	jar, err := os.ReadFile(filepath.Join(testutil.Root(), "apkstrings", "testdata", "hello.jar"))
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string][]byte{
		"app.apk":     zipBytes(t, "classes.dex", []byte("dex\n035\x00")),
		"classes.dex": []byte("dex\n035\x00"),
		"lib.jar":     jar,
		"names.txt":   []byte("com.example.Main\n"),
		"mapping.txt": []byte("com.example.Main -> a:\n"),
	}
	for name, data := range sources {
		d.Write(t, name, data)
	}
	before = d.Files(t)
	for _, c := range []struct {
		stdin, stdout string
		args          []string
		mention       string
	}{
		{"", "", []string{"-f", "in.bmd", "--apk", "app.apk", "-o", "app.apk"}, "output app.apk is the input file; refusing"},
		{"", "", []string{"-f", "in.bmd", "--dex", "classes.dex", "-o", "./classes.dex"}, "output ./classes.dex is the input file classes.dex"},
		{"", "", []string{"-f", "in.bmd", "--jar", "lib.jar", "-o", "lib.jar"}, "is the input file"},
		{"", "", []string{"-f", "in.bmd", "--strings", "names.txt", "-o", "names.txt"}, "is the input file"},
		{"", "", []string{"-f", "in.bmd", "--mapping", "mapping.txt", "-o", "mapping.txt"}, "is the input file"},
		{"in.bmd", "", []string{"-f", "-", "-o", "in.bmd"}, "output in.bmd is the input file standard input"},
		{"", "in.bmd", []string{"in.bmd"}, "standard output is the input file in.bmd"},
		{"", "mapping.txt", []string{"in.bmd", "--mapping", "mapping.txt", "-o", "-"}, "standard output is the input file mapping.txt"},
	} {
		r := d.RunRedirected(t, c.stdin, c.stdout, decrunchBin, c.args...)
		clitest.ExpectFail(t, d, r, 2, "decrunch", before, c.mention)
		if !bytes.Equal(d.Read(t, "in.bmd"), good) {
			t.Fatalf("decrunch %v: input changed", c.args)
		}
		for name, data := range sources {
			if !bytes.Equal(d.Read(t, name), data) {
				t.Fatalf("decrunch %v: %s changed", c.args, name)
			}
		}
	}
	clitest.ExpectOK(t, d.RunRedirected(t, "in.bmd", "", decrunchBin, "-f", "-", "-o", "out.hprof"))
	isHPROF(t, d.Read(t, "out.hprof"))
	// A device read and written is not overwritten: allowed, as before.
	clitest.ExpectOK(t, d.Run(t, nil, decrunchBin, "in.bmd", "--mapping", "/dev/null", "--strings", "/dev/null", "-o", "/dev/null"))
	// A folder is refused as a folder, not as an input.
	if err := os.Mkdir(filepath.Join(d.Path, "jdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	before = d.Files(t)
	r = d.Run(t, nil, decrunchBin, "in.bmd", "--jar", "jdir", "-o", "jdir")
	clitest.ExpectFail(t, d, r, 2, "decrunch", before, "output jdir is a directory")
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
			if strings.Contains(strings.Join(args, " "), "--stats") && (!strings.Contains(r.Stderr, "candidates:") ||
				!strings.Contains(r.Stderr, "enum constants' names written back from their static fields' names: ")) {
				t.Fatalf("--stats: %q", r.Stderr)
			}
		}
	})
	t.Run("--apk after the input", func(t *testing.T) {
		apk := filepath.Join(testutil.CorpusDir(t), "apk-jadx-small.apk")
		clitest.Copy(t, filepath.Join(d.Path, "x.apk"), apk)
		clitest.ExpectOK(t, d.Run(t, nil, decrunchBin, "in.bmd", "--apk", "x.apk", "-o", "apk.hprof"))
		isHPROF(t, d.Read(t, "apk.hprof"))
	})
	t.Run("salvage", func(t *testing.T) {
		// A file cut at three quarters: exit 3, a partial HPROF, and a
		// message that says so, also with --quiet.
		d.Write(t, "cut.bmd", bigBMD[:len(bigBMD)*3/4])
		for i, quiet := range []bool{false, true} {
			out := fmt.Sprintf("salvaged%d.hprof", i)
			args := []string{"--salvage", "cut.bmd", "-o", out}
			if quiet {
				args = append(args, "--quiet")
			}
			r := d.Run(t, nil, decrunchBin, args...)
			if r.Code != 3 || !strings.Contains(r.Stderr, "partial output "+out) || !strings.Contains(r.Stderr, "cut.bmd") || !strings.Contains(r.Stderr, "objects") {
				t.Fatalf("salvage of a cut file (quiet %v): exit %d, %q", quiet, r.Code, r.Stderr)
			}
			isHPROF(t, d.Read(t, out))
		}
		// A whole file: exit 0.
		clitest.ExpectOK(t, d.Run(t, nil, decrunchBin, "--salvage", "in.bmd", "-o", "whole.hprof"))
		// A zstd file cut at nine tenths: what decompresses is salvaged.
		zst := compressed(t, compress.Zstd, bigBMD)
		d.Write(t, "cut.bmd.zst", zst[:len(zst)*9/10])
		r := d.Run(t, nil, decrunchBin, "--salvage", "cut.bmd.zst", "-o", "zsalvaged.hprof")
		if r.Code != 3 || !strings.Contains(r.Stderr, "partial output") {
			t.Fatalf("salvage of a cut zstd file: exit %d, %q", r.Code, r.Stderr)
		}
		isHPROF(t, d.Read(t, "zsalvaged.hprof"))
		// Cut before any of the heap: exit 1, nothing written.
		d.Write(t, "early.bmd", bigBMD[:200])
		before := d.Files(t)
		r = d.Run(t, nil, decrunchBin, "--salvage", "early.bmd", "-o", "early.hprof")
		clitest.ExpectFail(t, d, r, 1, "decrunch", before, "early.bmd", "nothing of the heap dump before the damage")
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

// TestSignals: each termination signal removes decrunch's temporary files
// and exits with 128 plus the signal's number, saying so with the
// command's name: while it copies its standard input to a temporary file
// (it reads its input twice, names first), and while it writes to a
// standard output nobody reads. (crunch's TestSignals covers a temporary
// output file: the commands share that code.)
func TestSignals(t *testing.T) {
	fixtures(t)
	for _, sig := range []struct {
		sig  syscall.Signal
		name string
		code int
	}{
		{syscall.SIGINT, "SIGINT", 130},
		{syscall.SIGTERM, "SIGTERM", 143},
		{syscall.SIGHUP, "SIGHUP", 129},
		{syscall.SIGQUIT, "SIGQUIT", 131},
	} {
		t.Run(sig.name+" spooling", func(t *testing.T) {
			d := clitest.NewDir(t)
			before := d.Files(t)
			cmd := d.Command(t.Context(), decrunchBin, "-", "-o", "out.hprof")
			pw, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			var werr error
			go func() { werr = cmd.Wait(); close(exited) }()
			if _, err := pw.Write(bigBMD[:len(bigBMD)/2]); err != nil { // and keep the pipe open
				t.Fatalf("writing decrunch's input: %v (stderr %q)", err, stderr.String())
			}
			if !clitest.WaitFor(t, "the spool file exists", func() bool { return d.HasSpool(cmd.Process.Pid) }, exited) {
				t.Fatalf("decrunch ended (%v) before it made its spool file: stderr %q", werr, stderr.String())
			}
			cmd.Process.Signal(sig.sig)
			<-exited
			pw.Close()
			r := clitest.Result{Code: clitest.ExitCode(t, cmd, werr), Stderr: stderr.String()}
			clitest.NoPanic(t, r)
			clitest.ExpectFail(t, d, r, sig.code, "decrunch", before, "decrunch: interrupted ("+sig.name+"): no output written")
		})
		t.Run(sig.name+" writing", func(t *testing.T) {
			d := clitest.NewDir(t)
			d.Write(t, "big.bmd", bigBMD)
			before := d.Files(t)
			// Its first byte read, the pipe never again: decrunch fills it
			// and blocks writing.
			cmd, pr, _, stderr := d.StartPiped(t, 1, decrunchBin, "big.bmd")
			time.Sleep(100 * time.Millisecond)
			cmd.Process.Signal(sig.sig)
			werr := cmd.Wait()
			pr.Close()
			r := clitest.Result{Code: clitest.ExitCode(t, cmd, werr), Stderr: stderr.String()}
			clitest.NoPanic(t, r)
			clitest.ExpectFail(t, d, r, sig.code, "decrunch", before, "decrunch: interrupted ("+sig.name+"): standard output is incomplete")
		})
	}
}

// TestBrokenPipe: when the reader of standard output or of a FIFO goes
// away, decrunch says so and exits with 141; the FIFO stays a FIFO.
func TestBrokenPipe(t *testing.T) {
	fixtures(t)
	t.Run("standard output", func(t *testing.T) {
		d := clitest.NewDir(t)
		d.Write(t, "in.bmd", bigBMD)
		before := d.Files(t)
		// A megabyte of HPROF follows the first 10 bytes: more than a pipe holds.
		r, head := d.RunClosingStdout(t, 10, decrunchBin, "in.bmd")
		clitest.ExpectFail(t, d, r, 141, "decrunch", before, "standard output was closed by its reader before the end (broken pipe)", "incomplete")
		if !bytes.HasPrefix(head, []byte("JAVA PROF")) {
			t.Errorf("output starts with %q", head)
		}
	})
	t.Run("FIFO", func(t *testing.T) {
		d := clitest.NewDir(t)
		d.Write(t, "in.bmd", bigBMD)
		fifo := filepath.Join(d.Path, "fifo")
		clitest.MakeFIFO(t, fifo)
		before := d.Files(t)
		wait := clitest.ReadFIFO(fifo, 10)
		r := d.Run(t, nil, decrunchBin, "in.bmd", "-o", "fifo")
		head := wait()
		clitest.ExpectFail(t, d, r, 141, "decrunch", before, "fifo was closed by its reader before the end (broken pipe)", "incomplete")
		if !bytes.HasPrefix(head, []byte("JAVA PROF")) {
			t.Errorf("output starts with %q", head)
		}
		clitest.IsFIFO(t, fifo)
	})
}

// TestOutputKinds: a FIFO and a character device are written in place,
// with or without --force, and stay what they are; a symbolic link stays
// a link and the file it points to is made, or with --force replaced;
// standard output may be a device or a pipe, not a terminal. Every case
// checks the exit code, the message, the files left and standard output.
func TestOutputKinds(t *testing.T) {
	fixtures(t)
	ref := clitest.NewDir(t)
	ref.Write(t, "in.bmd", good)
	clitest.ExpectOK(t, ref.Run(t, nil, decrunchBin, "in.bmd", "-o", "ref.hprof"))
	want := ref.Read(t, "ref.hprof")
	for _, c := range []struct {
		name    string
		out     string // made by the case: fifo, null, link (to real.hprof)
		force   bool
		code    int
		mention []string
		adds    []string
	}{
		{name: "FIFO", out: "fifo"},
		{name: "FIFO with --force", out: "fifo", force: true},
		{name: "null device", out: "null"},
		{name: "null device with --force", out: "null", force: true},
		{name: "link to a new file", out: "link", adds: []string{"real.hprof"}},
		{name: "link to an existing file", out: "link existing", code: 2, mention: []string{"link.hprof exists (a symbolic link to real.hprof)", "--force"}},
		{name: "link to an existing file with --force", out: "link existing", force: true},
		{name: "link to the input", out: "link to input", force: true, code: 2, mention: []string{"is the input file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := clitest.NewDir(t)
			d.Write(t, "in.bmd", good)
			var dest string
			var fifo func() []byte
			switch c.out {
			case "fifo":
				dest = filepath.Join(d.Path, "fifo")
				clitest.MakeFIFO(t, dest)
				fifo = clitest.ReadFIFO(dest, -1)
			case "null":
				dest = clitest.NullDevice(t, d)
			case "link", "link existing":
				if c.out == "link existing" {
					d.Write(t, "real.hprof", []byte("precious"))
				}
				os.Symlink("real.hprof", filepath.Join(d.Path, "link.hprof"))
				dest = "link.hprof"
			case "link to input":
				os.Symlink("in.bmd", filepath.Join(d.Path, "link.hprof"))
				dest = "link.hprof"
			}
			before := d.Files(t)
			args := []string{"in.bmd", "-o", dest}
			if c.force {
				args = append(args, "--force")
			}
			r := d.Run(t, nil, decrunchBin, args...)
			if c.code != 0 {
				clitest.ExpectFail(t, d, r, c.code, "decrunch", before, c.mention...)
			} else {
				clitest.ExpectOK(t, r)
				if r.Stderr != "" || r.Stdout != "" {
					t.Errorf("stderr %q, stdout %q", r.Stderr, clitest.Head(r.Stdout))
				}
				clitest.ExpectFiles(t, d, before, c.adds...)
			}
			switch c.out {
			case "fifo":
				if got := fifo(); !bytes.Equal(got, want) {
					t.Errorf("the FIFO's reader got %d bytes, want the %d of the HPROF", len(got), len(want))
				}
				clitest.IsFIFO(t, dest)
			case "null":
				clitest.IsCharDevice(t, dest)
			case "link", "link existing", "link to input":
				if l, err := os.Readlink(filepath.Join(d.Path, "link.hprof")); err != nil {
					t.Errorf("link.hprof is no longer a link: %v", err)
				} else if c.out == "link to input" {
					if !bytes.Equal(d.Read(t, "in.bmd"), good) {
						t.Error("the input changed")
					}
				} else if got := d.Read(t, l); c.code == 0 && !bytes.Equal(got, want) {
					t.Errorf("%s is not the HPROF", l)
				} else if c.code != 0 && string(got) != "precious" {
					t.Errorf("%s changed", l)
				}
			}
		})
	}
	t.Run("standard output", func(t *testing.T) {
		d := clitest.NewDir(t)
		d.Write(t, "in.bmd", good)
		null, err := os.OpenFile(clitest.NullDevice(t, d), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer null.Close()
		ptm, tty := clitest.OpenPTY(t)
		before := d.Files(t)
		for _, args := range [][]string{{"in.bmd"}, {"in.bmd", "-o", "-"}} {
			r := d.RunTo(t, null, decrunchBin, args...)
			clitest.ExpectOK(t, r)
			if r.Stderr != "" {
				t.Errorf("%v to a device: stderr %q", args, r.Stderr)
			}
			r = d.Run(t, nil, decrunchBin, args...)
			clitest.ExpectOK(t, r)
			if r.Stdout != string(want) || r.Stderr != "" {
				t.Errorf("%v to a pipe: %d bytes, stderr %q", args, len(r.Stdout), r.Stderr)
			}
			r = d.RunTo(t, tty, decrunchBin, args...)
			clitest.ExpectFail(t, d, r, 2, "decrunch", before, "standard output is a terminal", "give -o OUTPUT.hprof")
			if got := clitest.Pending(t, ptm); len(got) != 0 {
				t.Errorf("%v: %d bytes written to the terminal", args, len(got))
			}
			clitest.ExpectFiles(t, d, before)
		}
	})
}

// TestMessages: each message says what is wrong, about the right file, and
// what to do; an output name that asks for compression decrunch does not
// do is a warning.
func TestMessages(t *testing.T) {
	fixtures(t)
	t.Run("missing input before existing output", func(t *testing.T) {
		d := clitest.NewDir(t)
		d.Write(t, "existing.hprof", []byte("precious"))
		before := d.Files(t)
		r := d.Run(t, nil, decrunchBin, "nosuch.bmd", "-o", "existing.hprof")
		clitest.ExpectFail(t, d, r, 1, "decrunch", before, "decrunch: nosuch.bmd: no such file")
		if strings.Contains(r.Stderr, "--force") {
			t.Errorf("stderr speaks of the output: %q", r.Stderr)
		}
	})
	t.Run("compressed output name", func(t *testing.T) {
		d := clitest.NewDir(t)
		d.Write(t, "in.bmd", good)
		before := d.Files(t)
		r := d.Run(t, nil, decrunchBin, "in.bmd", "-o", "OUT.HPROF.GZ")
		clitest.ExpectOK(t, r)
		clitest.ExpectFiles(t, d, before, "OUT.HPROF.GZ")
		if want := "decrunch: warning: OUT.HPROF.GZ: written uncompressed, although its name says gzip"; !strings.HasPrefix(r.Stderr, want) {
			t.Errorf("stderr %q, want %q", r.Stderr, want)
		}
		isHPROF(t, d.Read(t, "OUT.HPROF.GZ"))
		if r.Stdout != "" {
			t.Errorf("stdout: %q", clitest.Head(r.Stdout))
		}
	})
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
	w.ClearString(1, []byte("java.lang.Object"))
	w.HashedString(2, 2, names.JavaHashString("[I"))
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

// TestOutputLimit: a 6 KB BMD that asks for 2 TB of HPROF (1,000 primitive
// arrays of 268 M longs) is refused at the default limit (4 GiB for a
// small file), with a message that names the limit and how to raise it,
// exit 1 and nothing left behind; --max-output 0 would lift the limit, and
// a real file passes under its default.
func TestOutputLimit(t *testing.T) {
	fixtures(t)
	var b bytes.Buffer
	w, err := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 8, ClassesPlaced: true})
	if err != nil {
		t.Fatal(err)
	}
	w.HeapDump(true)
	for range 1000 {
		w.PrimitiveArray(bmd.Long, 268_000_000, false)
	}
	w.HeapDumpEnd()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d := clitest.NewDir(t)
	d.Write(t, "bomb.bmd", b.Bytes())
	before := d.Files(t)
	r := d.Run(t, nil, decrunchBin, "bomb.bmd", "-o", "out.hprof")
	clitest.ExpectFail(t, d, r, 1, "decrunch", before, "bomb.bmd", "larger than 4.0 GiB", "--max-output", "no output written")
	r = d.Run(t, nil, decrunchBin, "--max-output", "1M", "bomb.bmd", "-o", "out.hprof")
	clitest.ExpectFail(t, d, r, 1, "decrunch", before, "larger than 976.6 KiB", "--max-output")
	r = d.Run(t, nil, decrunchBin, "--max-output", "lots", "bomb.bmd", "-o", "out.hprof")
	clitest.ExpectFail(t, d, r, 2, "decrunch", before, "--max-output", "lots")
	d.Write(t, "in.bmd", bigBMD)
	clitest.ExpectOK(t, d.Run(t, nil, decrunchBin, "in.bmd", "-o", "in.hprof"))
}

// TestSpoolLimit: a compressed BMD is decompressed to a spool file before
// it is read; one that does not start as a BMD file is refused on
// its first bytes; one that decompresses beyond the output limit (its HPROF
// would be larger still) is refused before it fills the disk: with
// --max-output, at that size; by default, at the larger of 4 GiB and 100
// times the compressed bytes read (spoolLimit). Exit 1, a message that
// names the limit and how to raise it, nothing left behind. A real
// compressed BMD within the limit still passes.
func TestSpoolLimit(t *testing.T) {
	fixtures(t)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(make([]byte, 32<<20)) // 32 MiB of zeros in 32 KiB
	zw.Close()
	d := clitest.NewDir(t)
	// Zeros alone are not a BMD: refused on their first bytes, before
	// any limit (checkHead).
	d.Write(t, "zeros.bmd.gz", gz.Bytes())
	before := d.Files(t)
	r := d.Run(t, nil, decrunchBin, "--max-output", "8M", "zeros.bmd.gz", "-o", "out.hprof")
	clitest.ExpectFail(t, d, r, 1, "decrunch", before, "zeros.bmd.gz: bmd: not a BMD file: version 0")
	// Behind a real header (the first 4 KiB of a BMD file), they are
	// read until the limit.
	gz.Reset()
	zw = gzip.NewWriter(&gz)
	zw.Write(bigBMD[:4096])
	zw.Write(make([]byte, 32<<20))
	zw.Close()
	d.Write(t, "bomb.bmd.gz", gz.Bytes())
	before = d.Files(t)
	r = d.Run(t, nil, decrunchBin, "--max-output", "8M", "bomb.bmd.gz", "-o", "out.hprof")
	clitest.ExpectFail(t, d, r, 1, "decrunch", before, "bomb.bmd.gz: decompresses to more than 7.6 MiB", "beyond --max-output", "no output written", "0 removes it")
	if d.HasTemp("heapcrunch-spool-") {
		t.Errorf("a spool file was left behind")
	}
	// Standard input through a pipe is spooled too: a plain BMD larger
	// than --max-output is refused as it is copied.
	r = d.Run(t, bigBMD, decrunchBin, "--max-output", "1K", "-o", "out.hprof", "-")
	clitest.ExpectFail(t, d, r, 1, "decrunch", before, "-: larger than 1000 bytes, beyond --max-output")
	gz.Reset()
	zw = gzip.NewWriter(&gz)
	zw.Write(bigBMD)
	zw.Close()
	d.Write(t, "in.bmd.gz", gz.Bytes())
	clitest.ExpectOK(t, d.Run(t, nil, decrunchBin, "--max-output", strconv.Itoa(20*len(bigBMD)), "in.bmd.gz", "-o", "in.hprof"))

	for _, c := range []struct{ maxOut, read, want int64 }{
		{-1, 1000, 4 << 30},         // the default: 4 GiB for a small file,
		{-1, 1 << 30, 100 << 30},    // 100 times its compressed bytes beyond
		{0, 1 << 40, 0},             // --max-output 0: none
		{1 << 20, 1 << 30, 1 << 20}, // --max-output: that
	} {
		if got := spoolLimit(c.maxOut)(c.read); got != c.want {
			t.Errorf("spoolLimit(%d)(%d) = %d, want %d", c.maxOut, c.read, got, c.want)
		}
	}
}

// TestInfo: --info prints the metadata and writes no file; text from the
// file that could drive a terminal (escape sequences in a forged header)
// is printed quoted; a file that is not a BMD gets only the message.
func TestInfo(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	d.Write(t, "in.bmd", good)
	src := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	evil := "heapcrunch \x1b]0;PWNED\a\x1b[2J\x9b"
	d.Write(t, "evil.bmd", crunchBytes(t, src, crunch.Options{Tool: evil, Labels: []string{"app=com.example"}}))
	d.Write(t, "not.bmd", []byte("JAVA PROFILE 1.0.2\x00 an HPROF file"))
	before := d.Files(t)

	r := d.Run(t, nil, decrunchBin, "--info", "in.bmd")
	clitest.ExpectOK(t, r)
	for _, want := range []string{"file: in.bmd\n", "format: BMD version 2\n", "hprof_version: JAVA PROFILE 1.0.2\n", "id_size: 8\n", "objects: "} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("--info output lacks %q:\n%s", want, r.Stdout)
		}
	}

	r = d.Run(t, nil, decrunchBin, "--info", "evil.bmd")
	clitest.ExpectOK(t, r)
	if strings.ContainsAny(r.Stdout, "\x1b\a") || strings.Contains(r.Stdout, "\x9b") {
		t.Errorf("--info printed control characters from the file: %q", r.Stdout)
	}
	if want := "tool: " + strconv.Quote(evil) + "\n"; !strings.Contains(r.Stdout, want) {
		t.Errorf("--info output lacks %q:\n%s", want, r.Stdout)
	}
	if !strings.Contains(r.Stdout, "label: app=com.example\n") {
		t.Errorf("--info output lacks the label:\n%s", r.Stdout)
	}

	r = d.Run(t, nil, decrunchBin, "--info", "not.bmd")
	clitest.ExpectFail(t, d, r, 1, "decrunch", before, "not.bmd", "not a BMD file")
	r = d.Run(t, nil, decrunchBin, "--info", "in.bmd", "-o", "out.hprof")
	clitest.ExpectFail(t, d, r, 2, "decrunch", before, "--info prints the metadata and writes no file: leave out -o out.hprof")
	if after := d.Files(t); !slices.Equal(after, before) {
		t.Errorf("files after --info: %v, want %v", after, before)
	}
}

// TestProcessNameLabel: a BMD crunched without the app's process name,
// decrunched with it (--label ApplicationInfo.processName=...), gets its
// text in the String Shark reads it from, and --stats counts it; a name of
// another length writes nothing (testdata/watched, whose process is
// com.example.watched).
func TestProcessNameLabel(t *testing.T) {
	bmdFile := crunchBytes(t, testutil.ReadAll(t, filepath.Join(testutil.Fixture("watched"), "watchedleak.hprof.gz")), crunch.Options{})
	for _, c := range []struct {
		name, want string
		written    int
	}{{"com.example.watched", "com.example.watched", 1}, {"com.example.watched:sync", "", 0}} {
		t.Run(c.name, func(t *testing.T) {
			d := clitest.NewDir(t)
			d.Write(t, "in.bmd", bmdFile)
			r := d.Run(t, nil, decrunchBin, "--stats", "--label", "ApplicationInfo.processName="+c.name, "in.bmd", "-o", "out.hprof")
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			if line := fmt.Sprintf("the label ApplicationInfo.processName: %d Strings", c.written); !strings.Contains(r.Stderr, line) {
				t.Errorf("--stats does not say %q:\n%s", line, r.Stderr)
			}
			s, ok, err := heapstat.ProcessName(d.Read(t, "out.hprof"))
			if got := strings.Trim(s.Text, "\x00"); err != nil || !ok || got != c.want {
				t.Errorf("the process name %q (%v, %v), want %q", s.Text, ok, err, c.want)
			}
		})
	}
}

// TestBuildLabels: a BMD crunched without the device's labels, decrunched
// with them (--label Build.MANUFACTURER=..., Build.ID=...), gets their
// texts in android.os.Build's Strings, and --stats counts them; a label of
// another length writes nothing (testdata/activity, whose stand-in Build
// says "samsung").
func TestBuildLabels(t *testing.T) {
	bmdFile := crunchBytes(t, testutil.ReadAll(t, filepath.Join(testutil.Fixture("activity"), "activityleak.hprof.gz")), crunch.Options{})
	for _, c := range []struct {
		manufacturer, want string
		written            int
	}{{"samsung", "samsung", 2}, {"Google", "", 1}} {
		t.Run(c.manufacturer, func(t *testing.T) {
			d := clitest.NewDir(t)
			d.Write(t, "in.bmd", bmdFile)
			r := d.Run(t, nil, decrunchBin, "--stats", "--label", "Build.MANUFACTURER="+c.manufacturer, "--label", "Build.ID=TP1A.220624.014", "in.bmd", "-o", "out.hprof")
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			if line := fmt.Sprintf("Build.MANUFACTURER and Build.ID: %d Strings", c.written); !strings.Contains(r.Stderr, line) {
				t.Errorf("--stats does not say %q:\n%s", line, r.Stderr)
			}
			out := d.Read(t, "out.hprof")
			for static, want := range map[string]string{"MANUFACTURER": c.want, "ID": "TP1A.220624.014"} {
				s, ok, err := heapstat.StaticString(out, "android.os.Build", static)
				if got := strings.Trim(s.Text, "\x00"); err != nil || !ok || got != want {
					t.Errorf("Build.%s %q (%v, %v), want %q", static, s.Text, ok, err, want)
				}
			}
		})
	}
}
