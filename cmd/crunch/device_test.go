package main

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// The crunch that phones run is the android/arm64 build (README, "On the
// device"). These tests check that build as a file, and run the same
// code built for linux/arm64 under qemu-aarch64: Android's own linker,
// which the android build asks for, is not on this machine, and Go
// compiles the same files for both (android satisfies the linux build
// constraint; crunch has no file for android alone).

// devicePage is the largest page size of Android devices: since Android 15
// a device may use 16 KB pages, and a native library whose segments are
// not aligned to them does not load there.
const devicePage = 16 << 10

// crossBuild builds cmd/crunch for goos/arm64 into dir, with the
// README's flags for the device, and returns the binary's path.
func crossBuild(t *testing.T, goos, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "crunch-"+goos+"-arm64")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/crunch")
	cmd.Dir = testutil.Root()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH=arm64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=%s GOARCH=arm64 go build ./cmd/crunch: %v\n%s", goos, err, out)
	}
	return bin
}

// TestDeviceBuild: the android/arm64 build, as the README builds it, is a
// position-independent arm64 executable whose loaded segments are
// aligned for 16 KB pages.
func TestDeviceBuild(t *testing.T) {
	bin := crossBuild(t, "android", t.TempDir())
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 || f.Type != elf.ET_DYN {
		t.Fatalf("android build is %v %v, want EM_AARCH64 ET_DYN (a PIE)", f.Machine, f.Type)
	}
	loads := 0
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		loads++
		if p.Align < devicePage || (p.Vaddr-p.Off)%devicePage != 0 {
			t.Errorf("segment at %#x (file offset %#x) aligned to %#x: a device with %d KB pages cannot map it",
				p.Vaddr, p.Off, p.Align, devicePage>>10)
		}
	}
	if loads == 0 {
		t.Fatal("android build has no loadable segment")
	}
}

// TestDeviceRun: crunch built for arm64 and run under qemu-aarch64 writes
// the same BMD, byte for byte, as the build that runs the other tests, on
// real dumps (JDK fixtures with 8- and 4-byte IDs, the one with planted
// secrets, the corpus Android dump) and on a generated 24 MB one, whose
// mapped pages crunch gives back as it reads (every 8 MiB), with 4 KB
// pages and with a device's 16 KB; with default options and with each
// option that changes what is written.
func TestDeviceRun(t *testing.T) {
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		testutil.Skip(t, "qemu-aarch64 not found (Debian package qemu-user): cannot run the arm64 build")
	}
	dir := t.TempDir()
	bin := crossBuild(t, "linux", dir)
	dumps := map[string]string{
		"dialer": filepath.Join(testutil.CorpusDir(t), "android-dalvik-kitkat-dialer.android-hprof"),
	}
	for _, name := range []string{"sample", "sample32", "secrets"} {
		dumps[name] = writeFixture(t, dir, name)
	}
	gen := filepath.Join(dir, "gen.hprof")
	if out, err := exec.Command(genhprofBin, "-o", gen, "-size", "24M", "-maxarray", "4KiB").CombinedOutput(); err != nil {
		t.Fatalf("genhprof: %v\n%s", err, out)
	}
	dumps["gen"] = gen

	type run struct {
		dump string
		opts []string
		page int // 0: the host's
	}
	var runs []run
	for _, opts := range [][]string{nil, {"--compress", "zstd"}, {"--format", "v1"}, {"--profile", "leak"}, {"--hash-platform-names"}} {
		runs = append(runs, run{"dialer", opts, 0})
	}
	for _, name := range []string{"sample", "sample32", "secrets", "gen"} {
		runs = append(runs, run{name, nil, 0})
	}
	runs = append(runs, run{"sample32", []string{"--format", "v1"}, 0}, run{"gen", nil, devicePage}, run{"dialer", nil, devicePage})
	// QEMU 9 removed -p (the page size a program sees).
	pages := exec.Command(qemu, "-p", strconv.Itoa(devicePage), bin, "--version").Run() == nil

	for _, r := range runs {
		name := strings.Join(append([]string{r.dump}, r.opts...), " ")
		if r.page != 0 {
			name += " 16KB pages"
		}
		t.Run(name, func(t *testing.T) {
			want := filepath.Join(dir, "host.bmd")
			got := filepath.Join(dir, "arm64.bmd")
			args := append(append([]string{"-q", "--force"}, r.opts...), dumps[r.dump])
			if out, err := exec.Command(crunchBin, append(args, want)...).CombinedOutput(); err != nil {
				t.Fatalf("crunch: %v\n%s", err, out)
			}
			var qargs []string
			if r.page != 0 {
				if !pages {
					testutil.Skip(t, "%s has no -p (removed in QEMU 9): the runs with 16 KB pages need QEMU 8 or older", qemu)
				}
				qargs = []string{"-p", strconv.Itoa(r.page)}
			}
			qargs = append(append(qargs, bin), append(args, got)...)
			if out, err := exec.Command(qemu, qargs...).CombinedOutput(); err != nil {
				t.Fatalf("qemu-aarch64 crunch: %v\n%s", err, out)
			}
			w, g := readFile(t, want), readFile(t, got)
			if !bytes.Equal(g, w) {
				t.Fatalf("arm64 build wrote %d bytes, the host's %d, first difference at byte %d", len(g), len(w), firstDiff(g, w))
			}
		})
	}
}

// writeFixture writes the dump of testdata/name.hprof.gz, decompressed, to
// dir and returns its path: crunch maps a dump given as a file.
func writeFixture(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name+".hprof")
	if err := os.WriteFile(p, testutil.ReadAll(t, testutil.Fixture(name+".hprof.gz")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readFile returns the bytes of the file at path, as they are (where
// testutil.ReadAll undoes compression).
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// firstDiff returns the offset of the first byte where a and b differ
// (the shorter one's length if one is a prefix of the other).
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
