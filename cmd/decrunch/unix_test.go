//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/heapcrunch/heapcrunch/internal/clitest"
)

// TestNameSourcePipe: an APK, DEX file or JAR given as a pipe (a named
// one here; a shell's <(...) is one too) or a device is a usage error that
// says so, where it was called damaged; --strings and --mapping read a
// pipe.
func TestNameSourcePipe(t *testing.T) {
	fixtures(t)
	d := clitest.NewDir(t)
	d.Write(t, "in.bmd", good)
	if err := syscall.Mkfifo(filepath.Join(d.Path, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := d.Files(t)
	for _, flag := range []string{"apk", "dex", "jar"} {
		r := d.Run(t, nil, decrunchBin, "in.bmd", "--"+flag, "fifo", "-o", "out.hprof")
		clitest.ExpectFail(t, d, r, 2, "decrunch", before, "--"+flag+" fifo: is a pipe, not a file", "give the file itself")
		r = d.Run(t, nil, decrunchBin, "in.bmd", "--"+flag, "/dev/zero", "-o", "out.hprof")
		clitest.ExpectFail(t, d, r, 2, "decrunch", before, "--"+flag+" /dev/zero: is a device, not a file")
	}
	// --strings from a pipe: a writer feeds the FIFO while decrunch reads.
	go func() {
		f, err := os.OpenFile(filepath.Join(d.Path, "fifo"), os.O_WRONLY, 0)
		if err == nil {
			f.WriteString("com.example.Main\n")
			f.Close()
		}
	}()
	r := d.Run(t, nil, decrunchBin, "in.bmd", "--strings", "fifo", "-o", "out.hprof")
	clitest.ExpectOK(t, r)
	if strings.Contains(r.Stderr, "no names found") {
		t.Errorf("--strings fifo read no names: %s", r.Stderr)
	}
	isHPROF(t, d.Read(t, "out.hprof"))
	// --mapping from a pipe, the same way.
	go func() {
		f, err := os.OpenFile(filepath.Join(d.Path, "fifo"), os.O_WRONLY, 0)
		if err == nil {
			f.WriteString("com.example.Main -> a:\n    int count -> b\n")
			f.Close()
		}
	}()
	r = d.Run(t, nil, decrunchBin, "-f", "in.bmd", "--mapping", "fifo", "-o", "out.hprof")
	clitest.ExpectOK(t, r)
	if strings.Contains(r.Stderr, "no class mapping found") {
		t.Errorf("--mapping fifo read no class mapping: %s", r.Stderr)
	}
	isHPROF(t, d.Read(t, "out.hprof"))
}
