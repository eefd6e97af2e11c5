package cliutil

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestReorderArgs(t *testing.T) {
	vf := map[string]bool{"o": true, "output": true, "apk": true}
	for _, c := range []struct{ in, want string }{
		{"decrunch in.bmd --apk x.apk -o out.hprof", "decrunch --apk x.apk -o out.hprof -- in.bmd"},
		{"decrunch --apk=x.apk in.bmd --stats", "decrunch --apk=x.apk --stats -- in.bmd"},
		{"crunch - - --quiet", "crunch --quiet -- - -"},
		{"crunch -- -weird-name.hprof out.bmd", "crunch -- -weird-name.hprof out.bmd"},
		{"decrunch in.bmd -o", "decrunch -o"}, // missing value: left for the parser to report
		{"decrunch -o - in.bmd", "decrunch -o - -- in.bmd"},
		{"decrunch", "decrunch"},
	} {
		got := strings.Join(ReorderArgs(strings.Fields(c.in), vf), " ")
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSniff(t *testing.T) {
	for head, want := range map[string]string{
		"":                                 "an empty file",
		"JAVA PROFILE 1.0.2\x00":           "an HPROF heap dump",
		"\x02\x10\x0a\x12JAVA PROFILE":     "a BMD file",
		"\x02\x04\x10\x04\x68\x01":         "a BMD file",
		"\x02\x02\x10\x04":                 "", // a development version without blocks, which bmd refuses
		"\x01\x12JAVA PROFILE 1.0.3":       "a BMD file",
		"PK\x03\x04\x14\x00":               "a zip archive",
		"dex\n035\x00":                     "a DEX file",
		"\x89PNG\r\n\x1a\n":                "a PNG image",
		"\x1f\x8b\x08":                     "a gzip file",
		"\x28\xb5\x2f\xfd":                 "a zstd file",
		"hello, world\n":                   "",
		"\x02 not a bmd":                   "",
		"\x01\x00":                         "a BMD file", // version 1, no metadata: NewV1Reader reads it
		"\x01\xff\xff\xff\xff\x0f":         "",           // version 1, metadata of -1 bytes
		"\xfd7zXZ\x00\x00":                 "an xz file (not supported: decompress it first)",
		"BZh91AY&SY":                       "a bzip2 file",
		"com.example.Foo -> a:\n":          "",
		"\xca\xfe\xba\xbe\x00\x00\x00\x3d": "a Java class file",
	} {
		if got := Sniff([]byte(head)); got != want {
			t.Errorf("Sniff(%q) = %q, want %q", head, got, want)
		}
	}
}

func TestCheckOutput(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "in.hprof")
	out := filepath.Join(d, "out.bmd")
	os.WriteFile(in, []byte("x"), 0o644)
	if err := CheckOutput(out, false, in); err != nil {
		t.Fatalf("new output: %v", err)
	}
	os.WriteFile(out, []byte("y"), 0o644)
	if err := CheckOutput(out, false, in); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("existing output: %v", err)
	}
	if err := CheckOutput(out, true, in); err != nil {
		t.Fatalf("existing output with force: %v", err)
	}
	if err := CheckOutput(in, true, "-", in); err == nil || !strings.Contains(err.Error(), "is the input") {
		t.Fatalf("output onto the input: %v", err)
	}
	if err := CheckOutput(d, true, in); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("output onto a folder: %v", err)
	}
	if err := CheckOutput("-", false, in); err != nil {
		t.Fatalf("standard output: %v", err)
	}
	// Abort removes the temporary file; nothing is left in the folder.
	o, err := CreateOutput(filepath.Join(d, "new.bmd"), false, in)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("partial"))
	o.Abort()
	ents, _ := os.ReadDir(d)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"in.hprof", "out.bmd"}) {
		t.Fatalf("after Abort: %v", names)
	}
}

// TestOutputKinds: what CheckOutput and CreateOutput do with each kind of
// destination, and that Commit and Abort leave only what they should.
func TestOutputKinds(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "in.hprof")
	os.WriteFile(in, []byte("x"), 0o644)
	os.WriteFile(filepath.Join(d, "existing.bmd"), []byte("y"), 0o600)
	os.Symlink("existing.bmd", filepath.Join(d, "link-existing.bmd"))
	os.Symlink("new.bmd", filepath.Join(d, "link-new.bmd"))
	os.Symlink("in.hprof", filepath.Join(d, "link-in.bmd"))
	os.Symlink("nowhere/new.bmd", filepath.Join(d, "link-nowhere.bmd"))
	os.Symlink("loop2.bmd", filepath.Join(d, "loop1.bmd"))
	os.Symlink("loop1.bmd", filepath.Join(d, "loop2.bmd"))
	if err := syscall.Mkfifo(filepath.Join(d, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(d, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	type outputCase struct {
		dest  string
		force bool
		want  string // "" for no error
		usage bool
	}
	var blockCases []outputCase
	// A block device node (of no device: it is never opened) needs root.
	if err := syscall.Mknod(filepath.Join(d, "blk"), syscall.S_IFBLK|0o600, 7<<8|250); err == nil {
		blockCases = []outputCase{{"blk", false, "is a block device; use --force", true}, {"blk", true, "", false}}
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("making a block device node: %v", err)
	} else {
		t.Logf("no block device case: %v", err)
	}
	for _, c := range append(blockCases, []outputCase{
		{"new.bmd", false, "", false},
		{"existing.bmd", false, "exists; use --force", true},
		{"existing.bmd", true, "", false},
		{"link-existing.bmd", false, "a symbolic link to " + filepath.Join(d, "existing.bmd"), true},
		{"link-existing.bmd", true, "", false},
		{"link-new.bmd", false, "", false},
		{"link-in.bmd", true, "is the input file", true},
		{"link-nowhere.bmd", false, "folder " + filepath.Join(d, "nowhere") + " does not exist", false},
		{"loop1.bmd", true, "", false}, // reported when creating
		{"fifo", false, "", false},
		{"/dev/null", false, "", false},
		{"sock", true, "is a socket", true},
		{"in.hprof/x.bmd", true, "in.hprof is not a folder", false},
		{"nowhere/x.bmd", true, "nowhere does not exist", false},
		{".", true, "names a directory", true},
		{"sub/", true, "names a directory", true},
	}...) {
		dest := c.dest
		if !filepath.IsAbs(dest) {
			dest = d + "/" + dest
		}
		err := CheckOutput(dest, c.force, in)
		var ue *UsageError
		switch {
		case c.want == "" && c.dest == "loop1.bmd":
			if err == nil {
				t.Errorf("%s: no error for a loop of links", c.dest)
			}
		case c.want == "" && err != nil:
			t.Errorf("%s (force %v): %v", c.dest, c.force, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s (force %v): %v, want %q", c.dest, c.force, err, c.want)
		case c.want != "" && errors.As(err, &ue) != c.usage:
			t.Errorf("%s: usage error %v, want %v", c.dest, !c.usage, c.usage)
		}
	}

	// A replaced file keeps its permissions; the link stays a link.
	o, err := CreateOutput(filepath.Join(d, "link-existing.bmd"), true, in)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("new content"))
	if o.Written() != 11 || o.Name() != filepath.Join(d, "link-existing.bmd") {
		t.Errorf("Written %d, Name %q", o.Written(), o.Name())
	}
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(d, "existing.bmd")); string(b) != "new content" {
		t.Errorf("existing.bmd holds %q", b)
	}
	if st, _ := os.Lstat(filepath.Join(d, "link-existing.bmd")); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	if st, _ := os.Stat(filepath.Join(d, "existing.bmd")); st.Mode().Perm() != 0o600 {
		t.Errorf("the replaced file's mode is %v, want 0600", st.Mode().Perm())
	}
	if o.describe() != filepath.Join(d, "link-existing.bmd")+" had been written in full" || o.Incomplete() != "" {
		t.Errorf("describe %q, Incomplete %q", o.describe(), o.Incomplete())
	}

	// A device is written in place, and what was written is incomplete if
	// the run fails.
	o, err = CreateOutput("/dev/null", false, in)
	if err != nil {
		t.Fatal(err)
	}
	if d := o.describe(); d != "nothing written to /dev/null" {
		t.Errorf("describe before writing: %q", d)
	}
	o.Write([]byte("abc"))
	if got := o.Incomplete(); got != "; /dev/null is incomplete (3 bytes written)" {
		t.Errorf("Incomplete: %q", got)
	}
	if got := o.describe(); got != "/dev/null is incomplete" {
		t.Errorf("describe: %q", got)
	}
	o.Abort()
	if st, err := os.Stat("/dev/null"); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is no longer a device: %v %v", st.Mode(), err)
	}

	ents, _ := os.ReadDir(d)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestCreateError: the reasons a file cannot be made are told apart: the
// folder is missing, or it exists and takes no new files (/proc).
func TestCreateError(t *testing.T) {
	d := t.TempDir()
	err := createError("x/out.bmd", filepath.Join(d, "x"), fs.ErrNotExist)
	if !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing folder: %v", err)
	}
	err = createError("out.bmd", d, &fs.PathError{Op: "open", Path: filepath.Join(d, ".out.bmd.tmp-1"), Err: syscall.ENOENT})
	if !strings.Contains(err.Error(), "does not accept new files") || strings.Contains(err.Error(), ".tmp-") {
		t.Errorf("existing folder: %v", err)
	}
	err = createError("out.bmd", d, &fs.PathError{Op: "open", Path: filepath.Join(d, ".out.bmd.tmp-1"), Err: syscall.EACCES})
	if !strings.Contains(err.Error(), "no permission to create files in folder") {
		t.Errorf("permission: %v", err)
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 arguments", 1: "1 argument", 2: "2 arguments"} {
		if got := Plural(n, "argument"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestSniffFile: a folder is named as one, and a FIFO is not read (its
// bytes would be lost to the real reading).
func TestSniffFile(t *testing.T) {
	d := t.TempDir()
	if got := SniffFile(d); got != "a folder" {
		t.Errorf("folder: %q", got)
	}
	fifo := filepath.Join(d, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- SniffFile(fifo) }()
	select {
	case got := <-done:
		if got != "" {
			t.Errorf("FIFO: %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("SniffFile waits on a FIFO")
	}
}

// TestOutputWriteback: a file output starts the disk writes of every
// writebackStep bytes written as it goes (what Commit's fsync then waits
// for is the rest), and the file committed holds every byte; an output
// that is not a temporary file (/dev/null here) starts none.
func TestOutputWriteback(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "in.hprof")
	os.WriteFile(in, []byte("x"), 0o644)
	out := filepath.Join(d, "out.hprof")
	o, err := CreateOutput(out, false, in)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	n := 2*writebackStep/len(chunk) + 1
	for i := range n {
		chunk[0] = byte(i)
		if _, err := o.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if o.flushed != 2*writebackStep {
		t.Errorf("writes started for %d bytes of %d, want %d", o.flushed, n*len(chunk), 2*writebackStep)
	}
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n*len(chunk) {
		t.Fatalf("committed %d bytes, want %d", len(got), n*len(chunk))
	}
	for i := range n {
		if got[i*len(chunk)] != byte(i) || !bytes.Equal(got[i*len(chunk)+1:(i+1)*len(chunk)], chunk[1:]) {
			t.Fatalf("chunk %d differs", i)
		}
	}
	null, err := CreateOutput("/dev/null", false, in)
	if err != nil {
		t.Fatal(err)
	}
	null.Write(bytes.Repeat(chunk, 5))
	if null.flushed != 0 {
		t.Errorf("/dev/null: writes started for %d bytes", null.flushed)
	}
	null.Commit()
}

// countSyncs replaces syncFile for the rest of the test with one that
// counts its calls and, on the first, returns what first returns (first
// may wait) instead of syncing; with first nil, every call syncs.
func countSyncs(t *testing.T, first func() error) *atomic.Int32 {
	old := syncFile
	t.Cleanup(func() { syncFile = old })
	var calls atomic.Int32
	syncFile = func(f *os.File) error {
		if calls.Add(1) == 1 && first != nil {
			return first()
		}
		return f.Sync()
	}
	return &calls
}

// TestOutputSyncsAhead: a file output syncs its temporary file on its own
// as the writes go (a sync ahead, started with a writeback step), so that
// Commit's own fsync has less to wait for; Commit waits for a sync ahead
// still running and syncs once more after it, and the file holds every
// byte.
func TestOutputSyncsAhead(t *testing.T) {
	release := make(chan struct{})
	// The sync ahead, held until the writes are done.
	calls := countSyncs(t, func() error { <-release; return nil })
	d := t.TempDir()
	out := filepath.Join(d, "out.bmd")
	o, err := CreateOutput(out, false)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{7}, writebackStep)
	for range 3 {
		if _, err := o.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; calls.Load() == 0 && i < 5000; i++ {
		time.Sleep(time.Millisecond) // the sync ahead's goroutine starting
	}
	if !o.syncing.Load() || calls.Load() == 0 {
		close(release)
		t.Fatal("no sync ahead running after 3 writeback steps")
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("%d syncs ahead while one runs, want 1", got)
	}
	committed := make(chan error)
	go func() { committed <- o.Commit() }()
	select {
	case err := <-committed:
		t.Fatalf("Commit returned (%v) before the sync ahead ended", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("%d syncs in all, want 2 (one ahead, Commit's)", got)
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() != 3*writebackStep {
		t.Fatalf("committed file: %v, %v; want %d bytes", fi, err, 3*writebackStep)
	}
	// A small output starts none.
	calls.Store(0)
	small, err := CreateOutput(filepath.Join(d, "small.bmd"), false)
	if err != nil {
		t.Fatal(err)
	}
	small.Write(chunk[:writebackStep-1])
	if err := small.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("small output: %d syncs, want Commit's alone", got)
	}
}

// TestOutputSyncAheadOff: with SyncAhead(false) the writeback steps start
// no sync ahead, and after SyncAhead(true) the next one does.
func TestOutputSyncAheadOff(t *testing.T) {
	calls := countSyncs(t, nil)
	o, err := CreateOutput(filepath.Join(t.TempDir(), "out.bmd"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Abort()
	chunk := bytes.Repeat([]byte{7}, writebackStep)
	o.SyncAhead(false)
	for range 3 {
		o.Write(chunk)
	}
	o.synced.Wait()
	if got := calls.Load(); got != 0 {
		t.Fatalf("%d syncs ahead while off", got)
	}
	o.SyncAhead(true)
	o.Write(chunk)
	o.synced.Wait()
	if got := calls.Load(); got != 1 {
		t.Fatalf("%d syncs ahead after a step with them on, want 1", got)
	}
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestOutputSyncAheadFails: a sync ahead's error, which the system
// reports to that fsync alone, fails Commit, which leaves neither the
// output nor its temporary file behind.
func TestOutputSyncAheadFails(t *testing.T) {
	countSyncs(t, func() error { return syscall.EIO })
	d := t.TempDir()
	out := filepath.Join(d, "out.bmd")
	o, err := CreateOutput(out, false)
	if err != nil {
		t.Fatal(err)
	}
	o.Write(bytes.Repeat([]byte{7}, writebackStep))
	err = o.Commit()
	if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "out.bmd") {
		t.Fatalf("Commit: %v, want the sync ahead's EIO, naming the output", err)
	}
	if left, _ := os.ReadDir(d); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestParseSize: decimal sizes with units are read to whole bytes; what
// is not a size, or rounds to no byte, or is past 4 EiB, is refused with a
// message that says which.
func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{
		"0": 0, "4096": 4096, "100G": 100e9, "100GB": 100e9, "1.5GiB": 3 << 29, " 2 kib ": 2048,
		"1.1K": 1100, "0.5": 1, "7b": 7, "4611686018427387904": 1 << 62, "4EiB": -1,
		"9007199254740993": 9007199254740993, "4611686018427387905": -1, "4194304TiB": 1 << 62, "4194305TiB": -1,
	} {
		got, err := ParseSize(s)
		if want < 0 {
			if err == nil {
				t.Errorf("ParseSize(%q) = %d, want an error", s, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for s, mention := range map[string]string{
		"NaN": "not a number", "Inf": "not a number", "-1": "not a number", "1e3": "not a number",
		"0x10": "not a number", "1.2.3": "not a number", ".": "not a number", "": "not a number",
		"lots": "not a number", "G": "not a number", "0.4": "less than one byte", "1e-9": "not a number",
		"0.0001K": "less than one byte", "9223372036854775807": "too large", "5000000T": "too large",
		strings.Repeat("9", 400): "too large", strings.Repeat("9", 400) + ".5": "too large",
	} {
		if _, err := ParseSize(s); err == nil || !strings.Contains(err.Error(), mention) {
			t.Errorf("ParseSize(%q): error %v, want one saying %q", s, err, mention)
		}
	}
}

// TestPrintable: text with only printable characters and spaces is kept;
// any control character or byte that is not UTF-8 makes it quoted.
func TestPrintable(t *testing.T) {
	for s, want := range map[string]string{
		"":                         "",
		"JAVA PROFILE 1.0.2":       "JAVA PROFILE 1.0.2",
		"heapcrunch 0.1.0 (été)":   "heapcrunch 0.1.0 (été)",
		"a\x1b[2J":                 `"a\x1b[2J"`,
		"title\x1b]0;x\a":          `"title\x1b]0;x\a"`,
		"tab\there":                `"tab\there"`,
		"line\n":                   `"line\n"`,
		"c1 \u009b2J":              `"c1 \u009b2J"`,
		"bad \x9b2J":               `"bad \x9b2J"`,
		"bidi \u202egnp.exe":       `"bidi \u202egnp.exe"`,
		"isolate \u2066x\u2069":    `"isolate \u2066x\u2069"`,
		"nbsp\u00a0and\u3000cjk 堆": "nbsp\u00a0and\u3000cjk 堆",
		"family 👩\u200d👧":          "family 👩\u200d👧",
		"می\u200cخواهم":            "می\u200cخواهم",
		"line\u2028sep":            `"line\u2028sep"`,
	} {
		if got := Printable(s); got != want {
			t.Errorf("Printable(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestCheckInput: a missing input, a folder or a socket is refused with a
// message that names it and says what it is; a file, a FIFO, a device and
// standard input are taken.
func TestCheckInput(t *testing.T) {
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, "in.hprof"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(d, "sub"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(d, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(d, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for name, want := range map[string]string{
		"in.hprof": "", "fifo": "", "/dev/null": "", "-": "",
		"missing": "missing: no such file", "sub": "sub: is a directory", "sock": "sock: is a socket, not a file",
	} {
		if name != "-" && !filepath.IsAbs(name) {
			name = filepath.Join(d, name)
			if want != "" {
				want = filepath.Join(d, want)
			}
		}
		err := CheckInput(name)
		switch {
		case want == "" && err != nil:
			t.Errorf("CheckInput(%s): %v", name, err)
		case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)):
			t.Errorf("CheckInput(%s): %v, want %q", name, err, want)
		}
	}
}

// TestSeekableInputStdin: standard input redirected from a file gives its
// content, read in place when plain (the file itself) and through a spool
// when compressed, and is never closed: a closed descriptor 0 would be the
// next file the command opens.
func TestSeekableInputStdin(t *testing.T) {
	d := t.TempDir()
	data := bytes.Repeat([]byte("JAVA PROFILE 1.0.2\x00 and the rest "), 1000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	for name, content := range map[string][]byte{"plain": data, "gzip": gz.Bytes()} {
		p := filepath.Join(d, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		old := os.Stdin
		os.Stdin = f
		src, size, _, cleanup, err := SeekableInput("-", nil)
		if err != nil {
			os.Stdin = old
			t.Fatalf("%s: %v", name, err)
		}
		got, err := io.ReadAll(src)
		if err != nil || !bytes.Equal(got, data) || size != int64(len(data)) {
			t.Errorf("%s: read %d bytes (size %d), %v; want the %d bytes", name, len(got), size, err, len(data))
		}
		if sf, ok := src.(*os.File); name == "plain" && (!ok || sf != f) {
			t.Errorf("plain: standard input not read in place (%T)", src)
		}
		cleanup()
		os.Stdin = old
		if _, err := f.Stat(); err != nil {
			t.Errorf("%s: standard input closed: %v", name, err)
		}
		f.Close()
	}
}

// TestSeekableInputLimit: a compressed input that decompresses beyond the
// limit given (a function of the compressed bytes read) is refused with a
// *SpoolLimitError that gives the limit, before all of it is copied; a
// limit of 0 or none copies it all; a plain file is read in place, never
// bounded.
func TestSeekableInputLimit(t *testing.T) {
	d := t.TempDir()
	const size = 8 << 20
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(make([]byte, size)) // zeros: 8 MiB in about 8 KiB
	zw.Close()
	zipped := filepath.Join(d, "zeros.gz")
	plain := filepath.Join(d, "zeros")
	if err := os.WriteFile(zipped, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	ratio := func(read int64) int64 { return 100 * read }
	for _, c := range []struct {
		name  string
		path  string
		limit func(int64) int64
		want  int64 // the limit reported, 0: no error
	}{
		{"fixed limit", zipped, func(int64) int64 { return 1 << 20 }, 1 << 20},
		{"ratio to the compressed bytes", zipped, ratio, -1},
		{"zero: none", zipped, func(int64) int64 { return 0 }, 0},
		{"nil: none", zipped, nil, 0},
		{"plain file in place", plain, func(int64) int64 { return 1 }, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, n, _, cleanup, damage, err := SeekableInputPartial(c.path, c.limit, nil)
			if c.want == 0 {
				if err != nil || damage != nil || n != size {
					t.Fatalf("got %d bytes, %v, %v; want all %d", n, err, damage, size)
				}
				cleanup()
				return
			}
			var se *SpoolLimitError
			if !errors.As(err, &se) {
				t.Fatalf("got %d bytes, %v; want a *SpoolLimitError", n, err)
			}
			want := c.want
			if want < 0 { // 100 times the compressed bytes read when it stopped
				want = 100 * se.Read
			}
			if se.Limit != want || se.Kind != "gzip" || se.Name != c.path || se.Read <= 0 || se.Read > int64(gz.Len()) {
				t.Errorf("%+v; want the limit %d, gzip, %s, and the compressed bytes read (at most %d)", se, want, c.path, gz.Len())
			}
			if !strings.HasPrefix(err.Error(), c.path+": decompresses to more than ") {
				t.Errorf("message %q", err)
			}
		})
	}
}

// TestSeekableInputCheck: a spooled input's first HeadSize bytes (all of
// a shorter one) go to the check before anything is spooled, and the
// spool still holds every byte; damage within the head skips the check
// and is reported; a refusal ends the reading at once, so an endless
// stream of gzipped zeros is refused after little of it is read, not
// copied until the disk or a limit is full.
func TestSeekableInputCheck(t *testing.T) {
	d := t.TempDir()
	long := make([]byte, 3*HeadSize+123)
	for i := range long {
		long[i] = byte(i * 7 / 5)
	}
	gz := func(data []byte) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		return b.Bytes()
	}
	for _, c := range []struct {
		name     string
		content  []byte
		want     []byte // the data, and the head the check gets
		damage   bool
		checked  bool
		wantHead int
	}{
		{"longer than the head", gz(long), long, false, true, HeadSize},
		{"shorter than the head", gz(long[:100]), long[:100], false, true, 100},
		{"empty", gz(nil), nil, false, true, 0},
		{"cut after the head", gz(long)[:len(gz(long))-40], long, true, true, HeadSize},
		{"cut within the head", gz(long[:1000])[:300], long[:1000], true, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(d, strings.ReplaceAll(c.name, " ", "-")+".gz")
			if err := os.WriteFile(p, c.content, 0o644); err != nil {
				t.Fatal(err)
			}
			var head []byte
			called := false
			check := func(h []byte) error { called, head = true, slices.Clone(h); return nil }
			src, n, _, cleanup, damage, err := SeekableInputPartial(p, nil, check)
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			if called != c.checked || called && !bytes.Equal(head, c.want[:c.wantHead]) {
				t.Errorf("check called %v with %d bytes; want called %v with the first %d", called, len(head), c.checked, c.wantHead)
			}
			if (damage != nil) != c.damage {
				t.Errorf("damage %v, want damage %v", damage, c.damage)
			}
			got, err := io.ReadAll(src)
			if err != nil || int64(len(got)) != n {
				t.Fatalf("read %d of %d bytes: %v", len(got), n, err)
			}
			if !c.damage && !bytes.Equal(got, c.want) {
				t.Errorf("spooled %d bytes, want the %d of the input", len(got), len(c.want))
			}
			if c.damage && !bytes.HasPrefix(c.want, got) {
				t.Errorf("spooled %d bytes, not a prefix of the input", len(got))
			}
		})
	}

	t.Run("refused", func(t *testing.T) {
		fifo := filepath.Join(d, "fifo")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		// The writer sends gzipped zeros until it is stopped, up to
		// 2 GiB; it counts what it compressed.
		var sent int64
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			defer f.Close()
			zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
			zeros := make([]byte, 1<<20)
			for sent < 2<<30 {
				if _, err := zw.Write(zeros); err != nil {
					return // the reader is gone (EPIPE)
				}
				sent += int64(len(zeros))
			}
			zw.Close()
		}()
		errNot := errors.New("not the kind of file wanted")
		_, _, _, _, err := SeekableInput(fifo, func([]byte) error { return errNot })
		if !errors.Is(err, errNot) || !strings.HasPrefix(err.Error(), fifo+": ") {
			t.Errorf("got %v, want the check's error after the input's name", err)
		}
		<-wrote
		if sent > 1<<30 {
			t.Errorf("the input was read for %d MiB after its head was refused", sent>>20)
		}
	})
}
