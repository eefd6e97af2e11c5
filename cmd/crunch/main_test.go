package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/bmdtest"
	"github.com/heapcrunch/heapcrunch/internal/clitest"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
	"github.com/heapcrunch/heapcrunch/internal/version"
)

var (
	crunchBin, decrunchBin string
	genhprofBin            string
	binDir                 string // the binaries and the big dump
	fullGz                 []byte // testdata/sample.hprof.gz
	full                   []byte // the same, decompressed (2.8 MB, HEAP DUMP SEGMENTs)
	small                  []byte // a few KB cut from it, for quick runs
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "crunch-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		binDir = dir
		for _, p := range []struct {
			bin *string
			pkg string
		}{{&crunchBin, "cmd/crunch"}, {&decrunchBin, "cmd/decrunch"}, {&genhprofBin, "internal/cmd/genhprof"}} {
			if *p.bin, err = clitest.Build(dir, p.pkg); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		if fullGz, err = os.ReadFile(testutil.Fixture("sample.hprof.gz")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

func fixtures(t *testing.T) {
	t.Helper()
	if full == nil {
		full = testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
		var err error
		if small, err = fuzzseed.Sample(full); err != nil {
			t.Fatal(err)
		}
	}
}

// firstHeapRecord returns the offset and length of the first HEAP DUMP
// (SEGMENT) record of an HPROF file.
func firstHeapRecord(t *testing.T, data []byte) (off int64, length uint32, tag hprof.Tag) {
	t.Helper()
	r, err := hprof.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Tag.IsHeapDump() {
			return rec.Offset, rec.Length, rec.Tag
		}
	}
	t.Fatal("no heap dump record")
	return
}

func pngBytes() []byte {
	return []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
}

func zipBytes(t *testing.T) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	w, _ := z.Create("hello.txt")
	w.Write([]byte("hello"))
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// isBMD checks that b, crunch's output, is a whole BMD file, and returns
// its metadata.
func isBMD(t *testing.T, b []byte) bmd.Metadata {
	t.Helper()
	return bmdtest.Records(t, b, false, nil)
}

// TestBadInput: every kind of bad input fails with exit code 1, a message
// that names the file and says what is wrong and where, no Go trace, and
// nothing left behind (no output, no temporary or spool file).
func TestBadInput(t *testing.T) {
	fixtures(t)
	off, length, tag := firstHeapRecord(t, full)
	if tag != hprof.TagHeapDumpSegment {
		t.Fatalf("the fixture's first heap record is %s, want a HEAP DUMP SEGMENT", tag)
	}
	midSegment := full[:off+9+int64(length)/2]
	badSub := bytes.Clone(full)
	badSub[off+9] = 0x42 // the first sub-record's tag
	badLen := bytes.Clone(full)
	binary.BigEndian.PutUint32(badLen[off+5:], 0xFFFFFFF0)
	hdr := []byte("JAVA PROFILE 1.0.2\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00")
	var bmdFile bytes.Buffer
	w, _ := bmd.NewWriter(&bmdFile, &bmd.Metadata{IDSize: 4})
	w.Close()

	cases := []struct {
		name    string
		file    string
		data    []byte // nil: the file is not created
		mention []string
	}{
		{"missing", "missing.hprof", nil, []string{"missing.hprof", "no such file"}},
		{"empty", "empty.hprof", []byte{}, []string{"empty.hprof", "empty file"}},
		{"truncated in a HEAP DUMP SEGMENT", "cut.hprof", midSegment, []string{"cut.hprof", "truncated", "offset", "tag 0x"}},
		{"truncated header", "cut-header.hprof", full[:25], []string{"cut-header.hprof", "truncated", "offset"}},
		{"truncated record header", "cut-record.hprof", full[:31+5], []string{"cut-record.hprof", "truncated", "offset"}},
		{"unknown sub-record", "badsub.hprof", badSub, []string{"badsub.hprof", "unknown tag", "HEAP DUMP SEGMENT", "tag 0x42", fmt.Sprintf("offset %d", off+9)}},
		{"record length too long", "badlen.hprof", badLen, []string{"badlen.hprof", "offset", "tag 0x"}},
		{"identifier size 5", "id5.hprof", hdr, []string{"id5.hprof", "identifier size 5", "offset"}},
		{"PNG", "picture.png", pngBytes(), []string{"picture.png", "not an HPROF heap dump", "PNG image"}},
		{"zip", "archive.zip", zipBytes(t), []string{"archive.zip", "not an HPROF heap dump", "zip archive"}},
		{"BMD", "dump.bmd", bmdFile.Bytes(), []string{"dump.bmd", "not an HPROF heap dump", "BMD file", "decrunch"}},
		{"text", "notes.txt", []byte("JAVA heap notes\n"), []string{"notes.txt", "JAVA PROFILE", "offset 0"}},
		{"truncated gzip", "cut.hprof.gz", fullGz[:len(fullGz)/2], []string{"cut.hprof.gz", "gzip", "truncated"}},
		// A compressed input is refused on its first bytes, before it is
		// spooled (checkHead).
		{"gzip BMD", "dump.bmd.gz", gzipped(bmdFile.Bytes()), []string{"dump.bmd.gz", "not an HPROF heap dump", "BMD file", "decrunch"}},
		{"gzip zeros", "zeros.hprof.gz", gzipped(make([]byte, 64<<20)), []string{"zeros.hprof.gz", "not an HPROF heap dump", "offset 0"}},
		{"damaged gzip header", "bad.hprof.gz", []byte{0x1f, 0x8b, 9, 9, 9}, []string{"bad.hprof.gz", "gzip"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := clitest.NewDir(t)
			if c.data != nil {
				d.Write(t, c.file, c.data)
			}
			before := d.Files(t)
			r := d.Run(t, nil, crunchBin, c.file, "out.bmd")
			clitest.ExpectFail(t, d, r, 1, "crunch", before, c.mention...)
			t.Logf("%s", strings.TrimSpace(r.Stderr))
		})
	}
	t.Run("directory", func(t *testing.T) {
		d := clitest.NewDir(t)
		os.Mkdir(filepath.Join(d.Path, "folder"), 0o755)
		before := d.Files(t)
		r := d.Run(t, nil, crunchBin, "folder", "out.bmd")
		clitest.ExpectFail(t, d, r, 1, "crunch", before, "folder", "is a directory")
	})
	t.Run("bad input on stdin", func(t *testing.T) {
		d := clitest.NewDir(t)
		before := d.Files(t)
		r := d.Run(t, midSegment, crunchBin, "-", "out.bmd")
		clitest.ExpectFail(t, d, r, 1, "crunch", before, "-: ", "truncated", "offset")
	})
	t.Run("output folder missing", func(t *testing.T) {
		d := clitest.NewDir(t)
		d.Write(t, "in.hprof", small)
		before := d.Files(t)
		r := d.Run(t, nil, crunchBin, "in.hprof", "nowhere/out.bmd")
		clitest.ExpectFail(t, d, r, 1, "crunch", before, "nowhere", "does not exist")
	})
}

// TestUsage: calling the command wrongly exits with 2, a one-line message
// that says what is wrong, a pointer to --help, and nothing on standard
// output.
func TestUsage(t *testing.T) {
	fixtures(t)
	for _, c := range []struct {
		args    []string
		mention []string
	}{
		{[]string{}, []string{"got 0 arguments"}},
		{[]string{"in.hprof"}, []string{"got 1 argument)", "crunch in.hprof - > OUT.bmd"}},
		{[]string{"in.hprof", "out.bmd", "extra"}, []string{"got 3 arguments"}},
		{[]string{"--no-such-flag", "in.hprof", "out.bmd"}, []string{"no-such-flag"}},
		{[]string{"in.hprof", "out.bmd", "--no-such-flag"}, []string{"no-such-flag"}},
		{[]string{"--compress", "xz", "in.hprof", "out.bmd"}, []string{"xz"}},
		{[]string{"--compress", "", "in.hprof", "out.bmd"}, []string{`unknown compression ""`}},
		{[]string{"--preserve-class", "", "in.hprof", "out.bmd"}, []string{"--preserve-class: an empty class name"}},
		{[]string{"--preserve-class", " ", "in.hprof", "out.bmd"}, []string{"--preserve-class: an empty class name"}},
		{[]string{"in.hprof", ""}, []string{"output name is empty"}},
		{[]string{"--profile", "nope", "in.hprof", "out.bmd"}, []string{"nope"}},
		{[]string{"--drop-heap", "nope", "in.hprof", "out.bmd"}, []string{"nope"}},
		{[]string{"--format", "v3", "in.hprof", "out.bmd"}, []string{"v3"}},
		{[]string{"in.hprof", "out.bmd", "--compress"}, []string{"compress"}},
		{[]string{"in.hprof", "folder"}, []string{"folder", "is a directory"}},
		{[]string{"in.hprof", "folder/"}, []string{"folder/", "names a directory"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			d := clitest.NewDir(t)
			d.Write(t, "in.hprof", small)
			os.Mkdir(filepath.Join(d.Path, "folder"), 0o755)
			before := d.Files(t)
			r := d.Run(t, nil, crunchBin, c.args...)
			clitest.ExpectFail(t, d, r, 2, "crunch", before, append(c.mention, "crunch --help")...)
		})
	}
}

// TestOutputRules: an existing output is kept unless --force; the input is
// never overwritten, even with --force or through another path.
func TestOutputRules(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	d.Write(t, "in.hprof", small)
	d.Write(t, "out.bmd", []byte("precious"))
	if err := os.Symlink("in.hprof", filepath.Join(d.Path, "link.hprof")); err != nil {
		t.Fatal(err)
	}
	before := d.Files(t)
	r := d.Run(t, nil, crunchBin, "in.hprof", "out.bmd")
	clitest.ExpectFail(t, d, r, 2, "crunch", before, "out.bmd", "exists", "--force")
	if string(d.Read(t, "out.bmd")) != "precious" {
		t.Fatal("existing output changed")
	}
	for _, args := range [][]string{
		{"in.hprof", "in.hprof"},
		{"--force", "in.hprof", "in.hprof"},
		{"-f", "in.hprof", "./in.hprof"},
		{"--force", "link.hprof", "in.hprof"},
		{"--force", "in.hprof", "link.hprof"},
	} {
		r := d.Run(t, nil, crunchBin, args...)
		clitest.ExpectFail(t, d, r, 2, "crunch", before, "is the input")
		if !bytes.Equal(d.Read(t, "in.hprof"), small) {
			t.Fatalf("%v: input changed", args)
		}
	}
	// The input as standard input, standard output or both, redirected
	// from or to it by a shell: refused with --force too.
	for _, c := range []struct {
		stdin, stdout string
		args          []string
		mention       string
	}{
		{"in.hprof", "", []string{"-f", "-", "in.hprof"}, "output in.hprof is the input file standard input"},
		{"in.hprof", "", []string{"-f", "-", "/dev/stdin"}, "output /dev/stdin is the input file standard input"},
		{"", "in.hprof", []string{"in.hprof", "-"}, "standard output is the input file in.hprof"},
		{"", "in.hprof", []string{"-f", "link.hprof", "/dev/stdout"}, "standard output is the input file link.hprof"},
		{"in.hprof", "in.hprof", []string{"-", "-"}, "standard output is the input file standard input"},
	} {
		r := d.RunRedirected(t, c.stdin, c.stdout, crunchBin, c.args...)
		clitest.ExpectFail(t, d, r, 2, "crunch", before, c.mention)
		if !bytes.Equal(d.Read(t, "in.hprof"), small) {
			t.Fatalf("< %s > %s crunch %v: input changed", c.stdin, c.stdout, c.args)
		}
	}
	// Standard input or output that is a file, but not the other end.
	clitest.ExpectOK(t, d.RunRedirected(t, "in.hprof", "", crunchBin, "-f", "-", "out.bmd"))
	isBMD(t, d.Read(t, "out.bmd"))
	clitest.ExpectOK(t, d.RunRedirected(t, "in.hprof", "out2.bmd", crunchBin, "-", "-"))
	isBMD(t, d.Read(t, "out2.bmd"))
	if err := os.Remove(filepath.Join(d.Path, "out2.bmd")); err != nil {
		t.Fatal(err)
	}

	r = d.Run(t, nil, crunchBin, "--force", "in.hprof", "out.bmd")
	clitest.ExpectOK(t, r)
	isBMD(t, d.Read(t, "out.bmd"))
	if after := d.Files(t); len(after) != len(before) {
		t.Fatalf("files after --force: %v", after)
	}
}

// TestSuccess covers standard input and output, --quiet, --help,
// --version, flags after the positional arguments, compressed input found
// by content, and zstd output that decrunch reads.
func TestSuccess(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	d.Write(t, "in.hprof", small)
	d.Write(t, "full.hprof", full)
	d.Write(t, "disguised.hprof", fullGz) // gzip content, plain name

	r := d.Run(t, nil, crunchBin, "--quiet", "in.hprof", "a.bmd")
	clitest.ExpectOK(t, r)
	if r.Stderr != "" || r.Stdout != "" {
		t.Fatalf("--quiet printed %q %q", r.Stderr, r.Stdout)
	}
	want := d.Read(t, "a.bmd")
	isBMD(t, want)

	t.Run("stdin", func(t *testing.T) {
		r := d.Run(t, small, crunchBin, "-", "stdin.bmd")
		clitest.ExpectOK(t, r)
		if !bytes.Equal(d.Read(t, "stdin.bmd"), want) {
			t.Fatal("crunch from standard input differs")
		}
		if tmp, _ := os.ReadDir(d.Tmp); len(tmp) != 0 {
			t.Fatalf("spool file left behind: %v", tmp)
		}
	})
	t.Run("stdout", func(t *testing.T) {
		r := d.Run(t, nil, crunchBin, "in.hprof", "-")
		clitest.ExpectOK(t, r)
		if r.Stdout != string(want) {
			t.Fatal("crunch to standard output differs")
		}
	})
	t.Run("stdin to stdout, gzip", func(t *testing.T) {
		r := d.Run(t, fullGz, crunchBin, "-", "-")
		clitest.ExpectOK(t, r)
		isBMD(t, []byte(r.Stdout))
	})
	t.Run("flags after arguments", func(t *testing.T) {
		for i, args := range [][]string{
			{"in.hprof", "k1.bmd", "--keep-strings"},
			{"in.hprof", "--keep-strings", "k2.bmd"},
			{"--keep-strings", "in.hprof", "k3.bmd"},
		} {
			clitest.ExpectOK(t, d.Run(t, nil, crunchBin, args...))
			if m := isBMD(t, d.Read(t, fmt.Sprintf("k%d.bmd", i+1))); m.Options != "--keep-strings" {
				t.Fatalf("%v: options %q", args, m.Options)
			}
		}
	})
	t.Run("gzip by content", func(t *testing.T) {
		clitest.ExpectOK(t, d.Run(t, nil, crunchBin, "disguised.hprof", "g.bmd"))
		clitest.ExpectOK(t, d.Run(t, nil, crunchBin, "full.hprof", "f.bmd"))
		if !bytes.Equal(d.Read(t, "g.bmd"), d.Read(t, "f.bmd")) {
			t.Fatal("gzip input gives another BMD than the plain input")
		}
	})
	t.Run("zstd output read by decrunch", func(t *testing.T) {
		clitest.ExpectOK(t, d.Run(t, nil, crunchBin, "full.hprof", "f.bmd.zst"))
		if z := d.Read(t, "f.bmd.zst"); !bytes.HasPrefix(z, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
			t.Fatalf("f.bmd.zst starts with % x, not the zstd magic", z[:4])
		}
		clitest.ExpectOK(t, d.Run(t, nil, crunchBin, "--compress", "gzip", "full.hprof", "f.gz.bmd"))
		if z := d.Read(t, "f.gz.bmd"); !bytes.HasPrefix(z, []byte{0x1f, 0x8b}) {
			t.Fatalf("--compress gzip output starts with % x", z[:2])
		}
		for _, in := range []string{"f.bmd.zst", "f.gz.bmd"} {
			out := in + ".hprof"
			clitest.ExpectOK(t, d.Run(t, nil, decrunchBin, in, "-o", out))
			r, err := hprof.NewReader(bytes.NewReader(d.Read(t, out)))
			if err != nil {
				t.Fatal(err)
			}
			if r.IDSize() != 8 {
				t.Fatalf("decrunched %s has %d-byte IDs", in, r.IDSize())
			}
		}
	})
	t.Run("help", func(t *testing.T) {
		for _, f := range []string{"--help", "-h"} {
			r := d.Run(t, nil, crunchBin, f)
			clitest.ExpectOK(t, r)
			for _, s := range []string{"Examples:", "crunch dump.hprof dump.bmd", "Exit codes", "--force"} {
				if !strings.Contains(r.Stdout, s) {
					t.Fatalf("%s does not show %q:\n%s", f, s, r.Stdout)
				}
			}
		}
	})
	t.Run("version", func(t *testing.T) {
		r := d.Run(t, nil, crunchBin, "--version")
		clitest.ExpectOK(t, r)
		if !strings.Contains(r.Stdout, version.Version) {
			t.Fatalf("--version printed %q", r.Stdout)
		}
	})
}

// bigGz returns a gzip-compressed synthetic dump big enough (80 MB, about
// two million objects) that crunch runs for a while after it has made its
// temporary output, so that a signal catches it at work. It is made once,
// by internal/cmd/genhprof.
func bigGz(t *testing.T) string {
	t.Helper()
	bigOnce.Do(func() {
		path := filepath.Join(binDir, "big.hprof.gz")
		f, err := os.Create(path)
		if err != nil {
			bigErr = err
			return
		}
		defer f.Close()
		zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
		cmd := exec.Command(genhprofBin, "-o", "-", "-size", "80M", "-maxarray", "4KiB")
		cmd.Stdout = zw
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			bigErr = fmt.Errorf("genhprof: %v: %s", err, stderr.String())
			return
		}
		if err := zw.Close(); err != nil {
			bigErr = err
			return
		}
		bigPath = path
	})
	if bigErr != nil {
		t.Fatal(bigErr)
	}
	return bigPath
}

var (
	bigOnce sync.Once
	bigPath string
	bigErr  error
)

// TestSignals: each termination signal, while crunch spools standard input
// (a spool file exists) or writes its output (a spool file and the
// temporary output exist), removes every file it made and exits with 128
// plus the signal's number, saying so with the command's name.
func TestSignals(t *testing.T) {
	fixtures(t)
	big := bigGz(t)
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
		for _, phase := range []struct {
			name    string
			args    []string
			wait    string // the file whose presence says the phase is on
			mention string
		}{
			{"spooling standard input", []string{"-", "out.bmd"}, "heapcrunch-spool-", "no output written"},
			{"writing the output", []string{"big.hprof.gz", "out.bmd"}, ".out.bmd.tmp-", "out.bmd not written"},
		} {
			t.Run(sig.name+" "+phase.name, func(t *testing.T) {
				d := clitest.NewDir(t)
				if err := os.Symlink(big, filepath.Join(d.Path, "big.hprof.gz")); err != nil {
					t.Fatal(err)
				}
				before := d.Files(t)
				cmd := d.Command(t.Context(), crunchBin, phase.args...)
				pw, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				if phase.args[0] == "-" {
					go pw.Write(full[:len(full)/2]) // and keep the pipe open
				}
				exited := make(chan struct{})
				var werr error
				go func() { werr = cmd.Wait(); close(exited) }()
				has := func() bool { return d.HasTemp(phase.wait) }
				if phase.wait == "heapcrunch-spool-" {
					has = func() bool { return d.HasSpool(cmd.Process.Pid) } // no name on Linux
				}
				if !clitest.WaitFor(t, phase.wait+" exists", has, exited) {
					t.Fatalf("crunch ended (%v) before %s existed: stderr %q", werr, phase.wait, stderr.String())
				}
				cmd.Process.Signal(sig.sig)
				<-exited
				pw.Close()
				r := clitest.Result{Code: clitest.ExitCode(t, cmd, werr), Stdout: stdout.String(), Stderr: stderr.String()}
				clitest.NoPanic(t, r)
				clitest.ExpectFail(t, d, r, sig.code, "crunch", before, "crunch: interrupted ("+sig.name+"): "+phase.mention)
			})
		}
	}
}

// TestStdinFile: standard input redirected from a dump file is read in
// place, like the file itself, with no copy: crunch needs no TMPDIR then,
// and writes the same BMD.
func TestStdinFile(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	d.Write(t, "in.hprof", full)
	clitest.ExpectOK(t, d.Run(t, nil, crunchBin, "in.hprof", "want.bmd"))
	stdin, err := os.Open(filepath.Join(d.Path, "in.hprof"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	cmd := d.Command(t.Context(), crunchBin, "-", "got.bmd")
	cmd.Env = append(cmd.Env, "TMPDIR="+filepath.Join(d.Path, "no-such-folder")) // the last one counts
	cmd.Stdin = stdin
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("crunch - got.bmd < in.hprof: %v\n%s", err, out)
	}
	if !bytes.Equal(d.Read(t, "got.bmd"), d.Read(t, "want.bmd")) {
		t.Fatal("crunch of standard input redirected from the dump differs from crunch of the dump")
	}
	// From a pipe it needs its copy, and says where it could not make it.
	cmd = d.Command(t.Context(), crunchBin, "-", "pipe.bmd")
	cmd.Env = append(cmd.Env, "TMPDIR="+filepath.Join(d.Path, "no-such-folder"))
	cmd.Stdin = bytes.NewReader(full)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "cannot make a temporary copy") {
		t.Fatalf("crunch - pipe.bmd with no TMPDIR: %v\n%s", err, out)
	}
}

// TestSpoolUnnamed: the spool file (here, of a gzip dump) has no name once
// written, so that SIGKILL, which no handler sees, leaves no copy of the
// dump behind; only the temporary output it was writing stays. On Linux
// it has none from the start: SIGKILL while it is written leaves nothing.
func TestSpoolUnnamed(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	if err := os.Symlink(bigGz(t), filepath.Join(d.Path, "big.hprof.gz")); err != nil {
		t.Fatal(err)
	}
	cmd := d.Command(t.Context(), crunchBin, "big.hprof.gz", "out.bmd")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var werr error
	go func() { werr = cmd.Wait(); close(exited) }()
	if !clitest.WaitFor(t, "the temporary output exists", func() bool { return d.HasTemp(".out.bmd.tmp-") }, exited) {
		t.Fatalf("crunch ended (%v) before it wrote its output", werr)
	}
	if d.HasTemp("heapcrunch-spool-") {
		t.Error("the spool file still has a name while crunch writes its output")
	}
	cmd.Process.Kill()
	<-exited
	if d.HasTemp("heapcrunch-spool-") {
		t.Error("SIGKILL left the spool file behind")
	}
	if runtime.GOOS != "linux" {
		return // elsewhere the spool has a name while it is written
	}
	// On Linux it never has one where the file system allows (O_TMPFILE),
	// and elsewhere loses it at once: SIGKILL while standard input is
	// copied leaves nothing either.
	cmd = d.Command(t.Context(), crunchBin, "-", "stdin.bmd")
	pw, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan struct{})
	go func() { werr = cmd.Wait(); close(exited) }()
	go pw.Write(full[:len(full)/2]) // and keep the pipe open
	if !clitest.WaitFor(t, "the spool file is open", func() bool { return d.HasSpool(cmd.Process.Pid) }, exited) {
		t.Fatalf("crunch ended (%v) before it made its spool file", werr)
	}
	if clitest.UnnamedFiles(d.Tmp) {
		open := d.OpenInTmp(cmd.Process.Pid)
		if d.HasTemp("heapcrunch-spool-") || len(open) != 1 || !strings.HasPrefix(filepath.Base(open[0]), "#") {
			t.Errorf("the spool file has had a name while standard input is copied: open as %q", open)
		}
	} else {
		t.Logf("%s cannot hold a file without a name (O_TMPFILE): the spool's name is removed as soon as it is made", d.Tmp)
		clitest.WaitFor(t, "the spool file has no name", func() bool { return !d.HasTemp("heapcrunch-spool-") }, exited)
	}
	cmd.Process.Kill()
	<-exited
	pw.Close()
	if d.HasTemp("heapcrunch-spool-") {
		t.Error("SIGKILL while spooling left the spool file behind")
	}
}

// TestBrokenPipe: when the reader of standard output or of a FIFO goes
// away, crunch says so, removes its spool file and exits with 141.
func TestBrokenPipe(t *testing.T) {
	fixtures(t)
	t.Run("standard output", func(t *testing.T) {
		d := clitest.NewDir(t)
		d.Write(t, "in.hprof.gz", fullGz) // spooled: gzip
		before := d.Files(t)
		// 165 KB of BMD follow the first 10 bytes: more than a pipe holds.
		r, head := d.RunClosingStdout(t, 10, crunchBin, "in.hprof.gz", "-")
		clitest.ExpectFail(t, d, r, 141, "crunch", before, "standard output was closed by its reader before the end (broken pipe)", "incomplete")
		isBMDStart(t, head)
	})
	t.Run("FIFO", func(t *testing.T) {
		d := clitest.NewDir(t)
		d.Write(t, "in.hprof.gz", fullGz)
		clitest.MakeFIFO(t, filepath.Join(d.Path, "fifo"))
		before := d.Files(t)
		wait := clitest.ReadFIFO(filepath.Join(d.Path, "fifo"), 10)
		r := d.Run(t, nil, crunchBin, "in.hprof.gz", "fifo")
		head := wait()
		clitest.ExpectFail(t, d, r, 141, "crunch", before, "fifo was closed by its reader before the end (broken pipe)", "incomplete")
		isBMDStart(t, head)
		clitest.IsFIFO(t, filepath.Join(d.Path, "fifo"))
	})
}

// isBMDStart checks that b starts as a version 2 BMD file does.
func isBMDStart(t *testing.T, b []byte) {
	t.Helper()
	if len(b) < 3 || b[0] != 2 {
		t.Errorf("output starts with % x, not a BMD header", b)
	}
}

func isSymlink(t *testing.T, path, target string) {
	t.Helper()
	l, err := os.Readlink(path)
	if err != nil {
		t.Fatalf("%s is no longer a symbolic link: %v", path, err)
	}
	if l != target {
		t.Errorf("%s points to %s, want %s", path, l, target)
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// TestOutputKinds: what each kind of output becomes. A FIFO and a
// character device are written in place, with or without --force, and
// stay what they are; a symbolic link stays a link and the file it points
// to is made, or with --force replaced by a new file (renamed over it),
// never the input; standard output may be a device or a pipe but not a
// terminal. Every case checks the exit code, the message, the files left
// (no temporary file) and that nothing else went to standard output.
func TestOutputKinds(t *testing.T) {
	fixtures(t)
	ref := clitest.NewDir(t)
	ref.Write(t, "in.hprof", small)
	clitest.ExpectOK(t, ref.Run(t, nil, crunchBin, "in.hprof", "ref.bmd"))
	want := ref.Read(t, "ref.bmd")

	type env struct {
		d    *clitest.Dir
		fifo func() []byte // the FIFO reader's result
		ino  uint64        // the link target's inode before the run
		null string
	}
	cases := []struct {
		name    string
		prep    func(t *testing.T, e *env) []string // makes the output; returns the arguments
		code    int
		mention []string // on stderr; none: stderr must be empty
		adds    []string // files the run adds to the work folder
		check   func(t *testing.T, e *env)
	}{
		{name: "FIFO", prep: func(t *testing.T, e *env) []string {
			clitest.MakeFIFO(t, filepath.Join(e.d.Path, "fifo"))
			e.fifo = clitest.ReadFIFO(filepath.Join(e.d.Path, "fifo"), -1)
			return []string{"in.hprof", "fifo"}
		}, check: func(t *testing.T, e *env) {
			if got := e.fifo(); !bytes.Equal(got, want) {
				t.Errorf("the FIFO's reader got %d bytes, want the %d of the BMD", len(got), len(want))
			}
			clitest.IsFIFO(t, filepath.Join(e.d.Path, "fifo"))
		}},
		{name: "FIFO with --force", prep: func(t *testing.T, e *env) []string {
			clitest.MakeFIFO(t, filepath.Join(e.d.Path, "fifo"))
			e.fifo = clitest.ReadFIFO(filepath.Join(e.d.Path, "fifo"), -1)
			return []string{"--force", "in.hprof", "fifo"}
		}, check: func(t *testing.T, e *env) {
			if got := e.fifo(); !bytes.Equal(got, want) {
				t.Errorf("the FIFO's reader got %d bytes, want the %d of the BMD", len(got), len(want))
			}
			clitest.IsFIFO(t, filepath.Join(e.d.Path, "fifo"))
		}},
		{name: "null device", prep: func(t *testing.T, e *env) []string {
			return []string{"in.hprof", e.null}
		}, check: func(t *testing.T, e *env) { clitest.IsCharDevice(t, e.null) }},
		{name: "null device with --force", prep: func(t *testing.T, e *env) []string {
			return []string{"--force", "in.hprof", e.null}
		}, check: func(t *testing.T, e *env) { clitest.IsCharDevice(t, e.null) }},
		{name: "link to a new file", prep: func(t *testing.T, e *env) []string {
			os.Symlink("real.bmd", filepath.Join(e.d.Path, "link.bmd"))
			return []string{"in.hprof", "link.bmd"}
		}, adds: []string{"real.bmd"}, check: func(t *testing.T, e *env) {
			isSymlink(t, filepath.Join(e.d.Path, "link.bmd"), "real.bmd")
			if !bytes.Equal(e.d.Read(t, "real.bmd"), want) {
				t.Error("real.bmd is not the BMD")
			}
		}},
		{name: "link to a new file in another folder", prep: func(t *testing.T, e *env) []string {
			os.Symlink("sub/real.bmd", filepath.Join(e.d.Path, "link.bmd"))
			return []string{"in.hprof", "link.bmd"}
		}, check: func(t *testing.T, e *env) {
			isSymlink(t, filepath.Join(e.d.Path, "link.bmd"), "sub/real.bmd")
			if !bytes.Equal(e.d.Read(t, "sub/real.bmd"), want) {
				t.Error("sub/real.bmd is not the BMD")
			}
			if ents, _ := os.ReadDir(filepath.Join(e.d.Path, "sub")); len(ents) != 1 {
				t.Errorf("sub holds %v", ents)
			}
		}},
		{name: "link to an existing file", prep: func(t *testing.T, e *env) []string {
			e.d.Write(t, "real.bmd", []byte("precious"))
			os.Symlink("real.bmd", filepath.Join(e.d.Path, "link.bmd"))
			return []string{"in.hprof", "link.bmd"}
		}, code: 2, mention: []string{"link.bmd", "exists", "symbolic link to real.bmd", "--force"}, check: func(t *testing.T, e *env) {
			isSymlink(t, filepath.Join(e.d.Path, "link.bmd"), "real.bmd")
			if string(e.d.Read(t, "real.bmd")) != "precious" {
				t.Error("real.bmd changed")
			}
		}},
		{name: "link to an existing file with --force", prep: func(t *testing.T, e *env) []string {
			e.d.Write(t, "real.bmd", []byte("precious"))
			os.Symlink("real.bmd", filepath.Join(e.d.Path, "link.bmd"))
			e.ino = inode(t, filepath.Join(e.d.Path, "real.bmd"))
			return []string{"--force", "in.hprof", "link.bmd"}
		}, check: func(t *testing.T, e *env) {
			isSymlink(t, filepath.Join(e.d.Path, "link.bmd"), "real.bmd")
			if !bytes.Equal(e.d.Read(t, "real.bmd"), want) {
				t.Error("real.bmd is not the BMD")
			}
			if inode(t, filepath.Join(e.d.Path, "real.bmd")) == e.ino {
				t.Error("real.bmd was written in place, not replaced by a new file")
			}
		}},
		{name: "link to the input", prep: func(t *testing.T, e *env) []string {
			os.Symlink("in.hprof", filepath.Join(e.d.Path, "link.bmd"))
			return []string{"--force", "in.hprof", "link.bmd"}
		}, code: 2, mention: []string{"link.bmd", "is the input file in.hprof", "symbolic link"}, check: func(t *testing.T, e *env) {
			if !bytes.Equal(e.d.Read(t, "in.hprof"), small) {
				t.Error("the input changed")
			}
		}},
		{name: "dangling link chain", prep: func(t *testing.T, e *env) []string {
			os.Symlink("link2.bmd", filepath.Join(e.d.Path, "link.bmd"))
			os.Symlink("real.bmd", filepath.Join(e.d.Path, "link2.bmd"))
			return []string{"in.hprof", "link.bmd"}
		}, adds: []string{"real.bmd"}, check: func(t *testing.T, e *env) {
			isSymlink(t, filepath.Join(e.d.Path, "link.bmd"), "link2.bmd")
			isSymlink(t, filepath.Join(e.d.Path, "link2.bmd"), "real.bmd")
			if !bytes.Equal(e.d.Read(t, "real.bmd"), want) {
				t.Error("real.bmd is not the BMD")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &env{d: clitest.NewDir(t)}
			e.d.Write(t, "in.hprof", small)
			os.Mkdir(filepath.Join(e.d.Path, "sub"), 0o755)
			e.null = clitest.NullDevice(t, e.d)
			args := c.prep(t, e)
			before := e.d.Files(t)
			r := e.d.Run(t, nil, crunchBin, args...)
			if c.code == 0 {
				clitest.ExpectOK(t, r)
				if r.Stderr != "" || r.Stdout != "" {
					t.Errorf("stderr %q, stdout %q", r.Stderr, clitest.Head(r.Stdout))
				}
				clitest.ExpectFiles(t, e.d, before, c.adds...)
			} else {
				clitest.ExpectFail(t, e.d, r, c.code, "crunch", before, c.mention...)
			}
			c.check(t, e)
		})
	}
}

// TestStandardOutputKinds: standard output may be a device (/dev/null) or
// a pipe, not a terminal: binary output is refused there before any work,
// as decrunch refuses it.
func TestStandardOutputKinds(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	d.Write(t, "in.hprof", small)
	t.Run("device", func(t *testing.T) {
		null, err := os.OpenFile(clitest.NullDevice(t, d), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer null.Close()
		r := d.RunTo(t, null, crunchBin, "in.hprof", "-")
		clitest.ExpectOK(t, r)
		if r.Stderr != "" {
			t.Errorf("stderr %q", r.Stderr)
		}
	})
	t.Run("pipe", func(t *testing.T) {
		for _, out := range []string{"-", "/dev/stdout"} {
			r := d.Run(t, nil, crunchBin, "in.hprof", out)
			clitest.ExpectOK(t, r)
			isBMD(t, []byte(r.Stdout))
			if r.Stderr != "" {
				t.Errorf("stderr %q", r.Stderr)
			}
		}
	})
	t.Run("file opened by the caller", func(t *testing.T) {
		// crunch in.hprof /dev/stdout > out.bmd: the shell's file is
		// written, not replaced, and needs no --force.
		f, err := os.Create(filepath.Join(d.Path, "redirected.bmd"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		before := d.Files(t)
		r := d.RunTo(t, f, crunchBin, "in.hprof", "/dev/stdout")
		clitest.ExpectOK(t, r)
		if r.Stderr != "" {
			t.Errorf("stderr %q", r.Stderr)
		}
		clitest.ExpectFiles(t, d, before)
		isBMD(t, d.Read(t, "redirected.bmd"))
	})
	t.Run("terminal", func(t *testing.T) {
		ptm, tty := clitest.OpenPTY(t)
		before := d.Files(t)
		for _, args := range [][]string{{"in.hprof", "-"}, {"-", "-"}, {"in.hprof", "/dev/stdout"}} {
			r := d.RunTo(t, tty, crunchBin, args...)
			clitest.ExpectFail(t, d, r, 2, "crunch", before, "standard output is a terminal", "give an output file")
			if got := clitest.Pending(t, ptm); len(got) != 0 {
				t.Errorf("%v: %d bytes written to the terminal", args, len(got))
			}
		}
	})
}

// TestMessages: each message says what is wrong, about the right file, and
// what to do.
func TestMessages(t *testing.T) {
	fixtures(t)
	cases := []struct {
		name    string
		args    []string
		code    int
		mention []string
		not     []string // must not be in the message
	}{
		{"missing input before existing output", []string{"nosuch.bmd", "existing.hprof"}, 1, []string{"crunch: nosuch.bmd: no such file"}, []string{"--force"}},
		{"output under a file", []string{"in.hprof", "in.hprof/out.bmd"}, 1, []string{"cannot create in.hprof/out.bmd", "in.hprof is not a folder"}, nil},
		{"output folder missing", []string{"in.hprof", "nowhere/out.bmd"}, 1, []string{"cannot create nowhere/out.bmd", "folder nowhere does not exist"}, nil},
		{"output under /proc", []string{"in.hprof", "/proc/out.bmd"}, 1, []string{"cannot create /proc/out.bmd", "folder /proc does not accept new files"}, []string{"does not exist"}},
		{"input folder", []string{"sub", "out.bmd"}, 1, []string{"sub: is a directory"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.args[1] == "/proc/out.bmd" {
				if st, err := os.Stat("/proc/self"); err != nil || !st.IsDir() {
					t.Skip("no /proc")
				}
			}
			d := clitest.NewDir(t)
			d.Write(t, "in.hprof", small)
			d.Write(t, "existing.hprof", small)
			os.Mkdir(filepath.Join(d.Path, "sub"), 0o755)
			before := d.Files(t)
			r := d.Run(t, nil, crunchBin, c.args...)
			clitest.ExpectFail(t, d, r, c.code, "crunch", before, c.mention...)
			for _, n := range c.not {
				if strings.Contains(r.Stderr, n) {
					t.Errorf("stderr mentions %q: %q", n, r.Stderr)
				}
			}
		})
	}
}

// TestOutputCompression: the output's name chooses its compression
// whatever its case, and --stats gives the real sizes: the bytes written
// and the BMD before compression.
func TestOutputCompression(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	d.Write(t, "in.hprof", full)
	clitest.ExpectOK(t, d.Run(t, nil, crunchBin, "in.hprof", "plain.bmd"))
	plain := d.Read(t, "plain.bmd")
	for _, c := range []struct {
		name  string
		magic []byte
	}{
		{"OUT.BMD.ZST", []byte{0x28, 0xb5, 0x2f, 0xfd}},
		{"Out.Bmd.Zstd", []byte{0x28, 0xb5, 0x2f, 0xfd}},
		{"OUT.BMD.GZ", []byte{0x1f, 0x8b}},
		{"out.bmd", []byte{2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := d.Files(t)
			r := d.Run(t, nil, crunchBin, "--stats", "in.hprof", c.name)
			clitest.ExpectOK(t, r)
			if r.Stdout != "" {
				t.Errorf("stdout: %q", clitest.Head(r.Stdout))
			}
			clitest.ExpectFiles(t, d, before, c.name)
			b := d.Read(t, c.name)
			if !bytes.HasPrefix(b, c.magic) {
				t.Fatalf("%s starts with % x, want % x", c.name, b[:4], c.magic)
			}
			var want string
			if c.name == "out.bmd" {
				want = fmt.Sprintf("output: %d bytes of BMD, uncompressed", len(b))
			} else {
				want = fmt.Sprintf("output: %d bytes written, ", len(b))
				if !strings.Contains(r.Stderr, fmt.Sprintf("%d bytes of BMD before compression", len(plain))) {
					t.Errorf("--stats does not give the %d bytes of BMD: %q", len(plain), r.Stderr)
				}
			}
			if !strings.Contains(r.Stderr, want) {
				t.Errorf("--stats does not say %q: %q", want, r.Stderr)
			}
		})
	}
}

// TestWarnings: an option that has nothing to act on is not silently
// ignored: crunch does the work, says so on stderr as a warning (not with
// --quiet), and exits with 0.
func TestWarnings(t *testing.T) {
	fixtures(t)
	for _, c := range []struct {
		name    string
		args    []string
		mention string
	}{
		{"--drop-heap of a heap not in the dump", []string{"--drop-heap", "zygote", "in.hprof", "out.bmd"}, "crunch: warning: --drop-heap zygote: "},
		{"--preserve-class of a class not in the dump", []string{"--preserve-class", "NoSuchClass", "in.hprof", "out.bmd"}, "crunch: warning: --preserve-class NoSuchClass: "},
		{"--hash-platform-names with --keep-strings", []string{"--keep-strings", "--hash-platform-names", "in.hprof", "out.bmd"}, "crunch: warning: --hash-platform-names has no effect with --keep-strings"},
		{"--compress against the name", []string{"--compress", "none", "in.hprof", "out.bmd.zst"}, "crunch: warning: out.bmd.zst: written uncompressed as --compress none asks"},
		{"a name of a compression crunch does not write", []string{"in.hprof", "out.bmd.XZ"}, "crunch: warning: out.bmd.XZ: written uncompressed, although its name says xz"},
		{"--compress against a name crunch does not write", []string{"--compress", "gzip", "in.hprof", "out.bmd.bz2"}, "crunch: warning: out.bmd.bz2: written with gzip, although its name says bzip2"},
		{"--compress in capitals against the name", []string{"--compress", "ZSTD", "in.hprof", "out.bmd.gz"}, "crunch: warning: out.bmd.gz: written with zstd as --compress ZSTD asks"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, quiet := range []bool{false, true} {
				d := clitest.NewDir(t)
				d.Write(t, "in.hprof", full)
				before := d.Files(t)
				args := c.args
				if quiet {
					args = append([]string{"--quiet"}, args...)
				}
				r := d.Run(t, nil, crunchBin, args...)
				clitest.ExpectOK(t, r)
				out := args[len(args)-1]
				clitest.ExpectFiles(t, d, before, out)
				if r.Stdout != "" {
					t.Errorf("stdout: %q", clitest.Head(r.Stdout))
				}
				switch {
				case quiet && r.Stderr != "":
					t.Errorf("--quiet printed %q", r.Stderr)
				case !quiet && !strings.HasPrefix(r.Stderr, c.mention):
					t.Errorf("stderr %q, want %q", r.Stderr, c.mention)
				case !quiet && strings.Count(r.Stderr, "\n") != 1:
					t.Errorf("stderr has more than one line: %q", r.Stderr)
				}
			}
		})
	}
}

// TestLabels: --label stores key=value pairs in the metadata, in order,
// and decrunch --info prints them with the dump's header and counts,
// reading only the header (also of a zstd file); a malformed label is a
// usage error.
func TestLabels(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	d.Write(t, "in.hprof", small)
	clitest.ExpectOK(t, d.Run(t, nil, crunchBin, "-q", "--label", "app=com.example.app", "--label", "version=4.2.1 (beta)",
		"--label", "build=8f3c2a1", "in.hprof", "out.bmd.zst"))
	r := d.Run(t, nil, decrunchBin, "--info", "out.bmd.zst")
	clitest.ExpectOK(t, r)
	for _, want := range []string{"compression: zstd", "format: BMD version 2", "hprof_version: JAVA PROFILE 1.0.2",
		"label: app=com.example.app\nlabel: version=4.2.1 (beta)\nlabel: build=8f3c2a1\n", "objects: ", "classes: ", "tool: heapcrunch"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("--info does not print %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "options:") {
		t.Errorf("--info prints options for a default crunch:\n%s", r.Stdout)
	}
	for _, bad := range []string{"novalue", "=x", "sp ace=x", "k=\x01"} {
		before := d.Files(t)
		r := d.Run(t, nil, crunchBin, "--label", bad, "in.hprof", "bad.bmd")
		clitest.ExpectFail(t, d, r, 2, "crunch", before, "--label")
	}
}

// TestStatsPrintable: --stats prints the dump's HPROF version quoted when
// it holds control characters, which a crafted dump could use to drive
// the terminal.
func TestStatsPrintable(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	evil := bytes.Replace(small, []byte("JAVA PROFILE 1.0.2\x00"), []byte("JAVA PROFILE 1.0.2\x1b[2J\x00"), 1)
	if bytes.Equal(evil, small) {
		t.Fatal("the fixture's header is not JAVA PROFILE 1.0.2")
	}
	d.Write(t, "evil.hprof", evil)
	r := d.Run(t, nil, crunchBin, "--stats", "evil.hprof", "out.bmd")
	clitest.ExpectOK(t, r)
	if strings.Contains(r.Stderr, "\x1b") {
		t.Errorf("--stats printed an escape character: %q", clitest.Head(r.Stderr))
	}
	if want := `input:  "JAVA PROFILE 1.0.2\x1b[2J", 8-byte IDs`; !strings.Contains(r.Stderr, want) {
		t.Errorf("--stats output lacks %s:\n%s", want, clitest.Head(r.Stderr))
	}
}

// TestStatsTime: --stats ends with the run's time from main's start to
// the output committed, and its parts: before pass 1, each phase of the
// crunch in order (crunch.Options.Phase), after it; the parts add up to
// the whole, and on Linux the processor time follows. Without --stats,
// nothing of it.
func TestStatsTime(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	d.Write(t, "in.hprof", small)
	r := d.Run(t, nil, crunchBin, "--stats", "in.hprof", "out.bmd")
	clitest.ExpectOK(t, r)
	line := ""
	for _, l := range strings.Split(r.Stderr, "\n") {
		if strings.HasPrefix(l, "time:") {
			line = l
		}
	}
	re := regexp.MustCompile(`^time: +([0-9.]+) ms from main's start to the output committed: ([0-9.]+) ms before pass 1, pass 1 ([0-9.]+) ms, numbering ([0-9.]+) ms, pass 2 ([0-9.]+) ms, ([0-9.]+) ms after(; processor time ([0-9.]+) ms, ([0-9.]+) cores busy)?$`)
	m := re.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("--stats printed no time line of the form wanted:\n%s", r.Stderr)
	}
	var total, parts float64
	for i := 1; i <= 6; i++ {
		v, err := strconv.ParseFloat(m[i], 64)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			total = v
		} else {
			parts += v
		}
	}
	// Each of the six figures is rounded to 0.1 ms: they may differ by
	// 0.3 ms, and a float's error.
	if total <= 0 || math.Abs(total-parts) > 0.31 {
		t.Errorf("the parts add up to %.1f ms, the whole is %.1f ms: %s", parts, total, line)
	}
	if runtime.GOOS == "linux" && m[7] == "" {
		t.Errorf("no processor time on Linux: %s", line)
	}
	r = d.Run(t, nil, crunchBin, "--force", "in.hprof", "out.bmd")
	clitest.ExpectOK(t, r)
	if strings.Contains(r.Stderr, "time:") {
		t.Errorf("without --stats: %q", r.Stderr)
	}
}

// gzipped returns data compressed with gzip.
func gzipped(data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

// TestHeapAdvisedFirst: run waits for main's advice of the Go heap for huge
// pages (heapAdvised) once, before it makes the output and converts, so
// that the conversion's allocations land in the advised range; a command
// line that run refuses does not wait.
func TestHeapAdvisedFirst(t *testing.T) {
	fixtures(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.hprof"), filepath.Join(dir, "out.bmd")
	if err := os.WriteFile(in, small, 0o644); err != nil {
		t.Fatal(err)
	}
	waits := clitest.CountWaits(t, &heapAdvised, out)
	if err := app().Run([]string{"crunch", "-q", in, out}); err != nil {
		t.Fatalf("crunch in the test's process: %v", err)
	}
	if *waits != 1 {
		t.Errorf("run waited for the heap's advice %d times, want 1", *waits)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("no output after the run: %v", err)
	}
	*waits = 0
	if err := app().Run([]string{"crunch", "-q", in}); err == nil {
		t.Error("crunch with one argument succeeded")
	}
	if *waits != 0 {
		t.Errorf("run refused its command line and waited for the heap's advice %d times, want 0", *waits)
	}
}
