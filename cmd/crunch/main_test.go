package main

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/clitest"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
	"github.com/heapcrunch/heapcrunch/internal/version"
)

var (
	crunchBin, decrunchBin string
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
		for _, p := range []struct {
			bin *string
			pkg string
		}{{&crunchBin, "cmd/crunch"}, {&decrunchBin, "cmd/decrunch"}} {
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
	for {
		rec, err := r.Next()
		if err != nil {
			t.Fatalf("no heap dump record: %v", err)
		}
		if rec.Tag.IsHeapDump() {
			return rec.Offset, rec.Length, rec.Tag
		}
	}
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

func isBMD(t *testing.T, b []byte) bmd.Metadata {
	t.Helper()
	r, err := bmd.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("output is not BMD: %v", err)
	}
	for {
		if _, err := r.Next(); err == io.EOF {
			return r.Metadata()
		} else if err != nil {
			t.Fatalf("output BMD does not read back: %v", err)
		}
	}
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
// and a pointer to --help, and nothing on standard output.
func TestUsage(t *testing.T) {
	fixtures(t)
	for _, args := range [][]string{
		{},
		{"in.hprof"},
		{"in.hprof", "out.bmd", "extra"},
		{"--no-such-flag", "in.hprof", "out.bmd"},
		{"in.hprof", "out.bmd", "--no-such-flag"},
		{"--compress", "xz", "in.hprof", "out.bmd"},
		{"--profile", "nope", "in.hprof", "out.bmd"},
		{"--drop-heap", "nope", "in.hprof", "out.bmd"},
		{"--format", "v3", "in.hprof", "out.bmd"},
		{"in.hprof", "out.bmd", "--compress"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			d := clitest.NewDir(t)
			d.Write(t, "in.hprof", small)
			before := d.Files(t)
			r := d.Run(t, nil, crunchBin, args...)
			clitest.ExpectFail(t, d, r, 2, "crunch", before, "crunch --help")
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

// TestInterrupt: Ctrl-C while crunch reads standard input leaves no spool
// file and no output behind.
func TestInterrupt(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	before := d.Files(t)
	cmd := d.Command(t.Context(), crunchBin, "-", "out.bmd")
	pw, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Write(full[:len(full)/2]) // and keep the pipe open
	deadline := time.Now().Add(20 * time.Second)
	for {
		if ents, _ := os.ReadDir(d.Tmp); len(ents) > 0 {
			break // spooling has begun
		}
		if time.Now().After(deadline) {
			t.Fatal("crunch did not start spooling")
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
