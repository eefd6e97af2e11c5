package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// lines returns the lines timeit appended to out, each split in fields.
func lines(t *testing.T, out string) [][]string {
	t.Helper()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ls [][]string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		ls = append(ls, strings.Fields(l))
	}
	return ls
}

func TestRunMeasures(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	out := filepath.Join(t.TempDir(), "times")
	// A command that sleeps 50 ms, writes to standard output (discarded)
	// and touches some memory: its line says at least that much, and that
	// it kept no core busy for most of its time.
	if st := run([]string{out, sh, "-c", "sleep 0.05; echo discarded"}); st != 0 {
		t.Fatalf("status %d, want 0", st)
	}
	if st := run([]string{out, sh, "-c", "exit 3"}); st != 3 {
		t.Errorf("status %d, want 3", st)
	}
	if st := run([]string{out, sh, "-c", "kill -TERM $$"}); st != 143 {
		t.Errorf("status %d for SIGTERM, want 143", st)
	}
	// A shell counting: busy on a core for most of its time.
	if st := run([]string{out, sh, "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"}); st != 0 {
		t.Fatalf("busy loop: status %d, want 0", st)
	}
	ls := lines(t, out)
	if len(ls) != 4 {
		t.Fatalf("%d lines, want 4 (one a run, the failed ones too): %q", len(ls), ls)
	}
	num := make([][]float64, len(ls))
	for i, l := range ls {
		if len(l) != 4 {
			t.Fatalf("line %d: %q, want seconds, KB, faults and processor seconds", i, l)
		}
		for _, f := range l {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Errorf("line %d: %q is not a number", i, f)
			}
			num[i] = append(num[i], v)
		}
		if kb, _ := strconv.Atoi(l[1]); kb <= 0 {
			t.Errorf("line %d: peak RSS %s KB", i, l[1])
		}
	}
	if s := num[0][0]; s < 0.05 || s > 5 {
		t.Errorf("a 50 ms sleep measured %v s", s)
	}
	if s, cpu := num[0][0], num[0][3]; cpu < 0 || cpu > s/2 {
		t.Errorf("a 50 ms sleep measured %v s of processor time in %v s", cpu, s)
	}
	// The loop takes about 0.1 s of processor time, and one core at most
	// its wall time; other tests may share the core, so the wall time
	// may be longer.
	if s, cpu := num[3][0], num[3][3]; cpu < 0.02 || cpu > s+0.01 {
		t.Errorf("a busy loop measured %v s of processor time in %v s (one core, busy: at most its wall time)", cpu, s)
	}
}

func TestRunRefuses(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "times")
	if st := run([]string{out}); st != 2 {
		t.Errorf("no command: status %d, want 2", st)
	}
	if st := run([]string{out, filepath.Join(dir, "missing")}); st != 127 {
		t.Errorf("a missing command: status %d, want 127", st)
	}
	if b, _ := os.ReadFile(out); len(b) != 0 {
		t.Errorf("a command not run left a line: %q", b)
	}
	if st := run([]string{filepath.Join(dir, "no", "such", "dir"), "true"}); st != 2 {
		t.Errorf("an output that cannot be opened: status %d, want 2", st)
	}
}
