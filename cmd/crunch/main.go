// Command crunch turns an HPROF heap dump into a small BMD file that
// carries no user data. See README.md and spec/bmd.md.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/bigmem"
	"github.com/heapcrunch/heapcrunch/internal/cliutil"
	"github.com/heapcrunch/heapcrunch/internal/compress"
	"github.com/heapcrunch/heapcrunch/internal/cores"
	"github.com/heapcrunch/heapcrunch/internal/version"
)

const help = `Turn an HPROF heap dump (Java or Android; plain, gzip, bzip2 or zstd) into
a BMD file: object graph kept, the app's names hashed (the platform's stay
readable), primitive contents dropped, but for a few platform facts
(Build.VERSION.SDK_INT), the Android framework's lifecycle flags
(Activity.mDestroyed...), two sizes (ArrayList.size, native allocations')
and the leak flags of libraries an app bundles (LeakCanary's
KeyedWeakReference times, Compose's CompositionImpl.disposed), by which
analyzers tell a leak and size it (spec/bmd.md 7.3).

Examples:
   crunch dump.hprof dump.bmd
   crunch dump.hprof.gz dump.bmd.zst            (zstd, chosen by the name)
   crunch --keep-strings dump.hprof dump.bmd     (the app's names in the clear too)
   crunch --profile leak app.hprof app.bmd       (every field LeakCanary's Shark reads)
   crunch --drop-heap zygote,image app.hprof app.bmd   (the app heap alone; not for Shark)
   adb shell cat /data/local/tmp/app.hprof | crunch - - > app.bmd

Output: a new file, or with --force an existing one, is written to a
temporary file beside it and renamed over it only when complete; a
symbolic link is followed and the file it points to replaced (the link
stays). A FIFO or a character device (/dev/null) is written in place and
needs no --force, since nothing is overwritten; a block device needs
--force. - is standard output, refused when it is a terminal. The output
is never the input, also through links or redirections (< in.hprof,
>> in.hprof), even with --force. A new file's permissions follow the
umask; a replaced one keeps its own.

Cores: both passes use a second core where that pays: more than one core
for Go (GOMAXPROCS), 262,144 objects or more, and a dump file of 16 MiB
or more. A short probe of the other core says how near it is; where it
gets no answer (both cores busy, or the other one stopped a while), the
dump is read at offsets, as below. The other core then reads heap dump
records itself and, in the second pass, writes their objects ahead (not
with --drop-heap): records of up to 4 MiB, larger ones (the one record
of a 1.0.1 dump, as JDK 8 writes a heap of up to 2 GB) in pieces;
unmapped, the first pass reads those larger ones on one core. Where the
other core stops writing a part the second pass needs next (no progress
for a millisecond: another program has its time), the second pass writes
that part itself rather than wait. The file is mapped in memory where
the other core answers the probe and reading it mapped pays (measured,
about 2 ms): with the cores far, 256 KiB of it read mapped take at most
half as long again as read through a buffer; with them near, the page
faults of 2 MiB of it mapped take at most a quarter of the time of
reading them (the page cache holds the file in 2 MiB folios).
Otherwise each core reads its parts at their offsets into buffers of its
own, parts of 256 KiB in the second pass, and Android's records of 4 KiB
in batches of about 1 MiB in the first; in the second, a span of those
records that the other core wrote is not read again. A dump under 16
MiB, or with one core, is read through a buffer, its second pass on one
core (a few milliseconds either way). Where the second pass is not split otherwise
(--drop-heap, a file of several heap dumps), reading and writing share
its work in a pipeline if a cache line goes to the other core and back
in under 150 ns (the cores share a cache, and the other one is not
busy). A dump from a pipe, or compressed, is first copied to a temporary
file and read as a file. The BMD file is the same either way.
HEAPCRUNCH_SPLIT=on or off forces the split (and the mapping) or none,
and HEAPCRUNCH_PIPELINE=on or off the pipeline or one core.

Exit codes: 0 done; 1 bad input or failed conversion (no output file is
left behind); 2 usage error; 128+N ended by signal N, after removing temporary
and spool files: 130 SIGINT, 143 SIGTERM, 129 SIGHUP, 131 SIGQUIT; 141 the
output's reader (pipe or FIFO) went away before the end.`

func main() {
	cliutil.CollectLess(gcPercent)
	heapAdvised = adviseHeap()
	os.Exit(cliutil.Run(app(), os.Args))
}

// heapAdvised waits for the advice of the Go heap for huge pages
// (bigmem.HugeHeap, 2.0 to 2.5 ms on this project's VM), which main starts
// beside the reading and checking of the command line (1.3 to 1.9 ms);
// run waits for it before the conversion allocates. Six sets of 41
// alternating runs on the 134 MB dump, two cores, medians (2026-12-04):
// 199.8, 182.8, 173.3, 172.1, 172.7 and 179.1 ms with HugeHeap first
// against 199.9, 176.9, 171.1, 172.6, 170.9 and 174.5 ms beside, 2.3 ms
// less on average; one core 273.5 against 263.9 ms (21 runs), within the
// noise.
var heapAdvised = func() {}

// adviseHeap starts bigmem.HugeHeap beside what main does next, where Go
// has two cores (cores.Alongside), and returns a function that waits for
// it. Its goroutine then lingers (cores.Linger), up to probeLinger, for
// the probe of the cores that crunch of a large file makes next
// (crunch.Crunch, cores.SplitCores).
func adviseHeap() (wait func()) {
	advised := cores.Alongside(func() error {
		bigmem.HugeHeap(bigmem.HeapAdvice)
		go cores.Linger(probeLinger)
		return nil
	})
	return func() { _ = advised() }
}

// probeLinger bounds cores.Linger after the heap's advice: the probe of
// the cores comes within a millisecond or so where it comes at all (a
// file of 16 MiB or more; not with GOMAXPROCS=1, where Linger returns at
// once). Where crunch reads its input through a buffer, with no probe, it
// ends the lingering then (cores.EndLinger).
const probeLinger = 5 * time.Millisecond

// gcPercent is crunch's GOGC (cliutil.CollectLess): the collector runs
// once the heap has grown by 8 times what lived after the last collection,
// where Go's default is once it has doubled. Crunch's heap is mostly
// tables that live to the end, so the slower pace spares collections and
// the page faults of their sweeps more than it adds to the peak. With the
// default, the collections while the heap is still small, as the first
// pass reads the dump's strings, cost 4 to 5 % (12 alternating runs on the
// README's 134 MB dump, median 0.2235 s at GOGC=400 against 0.2346 s at
// the default; on big-200m.hprof 0.234 s against 0.244 s; peak RSS 46 MB
// against 39 MB and 47 against 42 MB, on big-1300m.hprof 93 MB either way;
// 2026-12-02). At 800 rather than 400 the 134 MB dump's crunch runs no
// collection but the heap's advice's (bigmem.HugeHeap): about 190 fewer
// page faults and 2.5 to 5.4 ms less (medians of four sets of 41
// alternating runs, 2026-12-04), the same peak RSS on it, ManyClasses,
// big-200m.hprof, big-1300m.hprof, the 6 M-object genhprof dumps, a
// genhprof dump of Android's 4 KiB records and the corpus's Android and
// JDK 11 dumps, 2.5 MB more with --format v1 (docs/measurements.md,
// "GOGC 800").
const gcPercent = 800

func app() *cli.App {
	return &cli.App{
		Name:            "crunch",
		Usage:           "HPROF heap dump -> compact, private BMD",
		UsageText:       "crunch [options] INPUT.hprof OUTPUT.bmd   (- for standard input or output)",
		Description:     help,
		Version:         version.Version,
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "keep-strings", Usage: "keep every name (class, field, method, thread) in the clear"},
			&cli.BoolFlag{Name: "hash-platform-names", Usage: "hash the platform's names too (classes of the boot class loader, their fields and methods, heap names), which are public and stay in the clear by default"},
			&cli.BoolFlag{Name: "keep-primitives", Usage: "keep every primitive field value (instance, static, constant pool); array contents are never kept"},
			&cli.StringSliceFlag{Name: "preserve-class", Usage: "keep this class's name and all its field values (repeatable)"},
			&cli.StringFlag{Name: "profile", Usage: "keep the fields a profile needs: leak (what LeakCanary's Shark reads)"},
			&cli.StringFlag{Name: "drop-heap", Usage: "leave out the objects of these Android heaps, comma-separated: zygote, image, app, default (for a view of the app heap; LeakCanary's Shark needs objects of the zygote heap)"},
			&cli.StringSliceFlag{Name: "label", Usage: "store key=value in the file's metadata (repeatable): app id, version, build id, mapping id; decrunch --info prints them; Build.MANUFACTURER= and Build.ID= (the device's) and ApplicationInfo.processName= (the app's process) decrunch writes into those Strings"},
			&cli.StringFlag{Name: "compress", Usage: "compress the output: none, zstd or gzip (default: by output name, .zst, .zstd or .gz in any case)"},
			&cli.StringFlag{Name: "format", Value: "v2", Usage: "BMD version to write: v2 (this project's) or v1 (the 2014 tools')"},
			&cli.BoolFlag{Name: "stats", Usage: "print records and bytes per kind, in and out, and the run's time by phase, on stderr"},
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "replace an existing output file (a FIFO or character device needs none)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar, no warnings (nor, with --format v1, the list of what version 1 cannot carry)"},
		},
		Action: run,
	}
}

func run(c *cli.Context) error {
	if c.NArg() != 2 {
		msg := fmt.Sprintf("need INPUT and OUTPUT (got %s)", cliutil.Plural(c.NArg(), "argument"))
		if c.NArg() == 1 {
			msg += fmt.Sprintf("; for standard output give -: crunch %s - > OUT.bmd", c.Args().Get(0))
		}
		return cliutil.Usagef("%s", msg)
	}
	inName, outName := c.Args().Get(0), c.Args().Get(1)
	opt, err := options(c)
	if err != nil {
		return err
	}
	// Output names are matched whatever their case: OUT.ZST is zstd.
	byName := compress.ForName(strings.ToLower(outName))
	kind := byName
	if c.IsSet("compress") {
		if kind, err = compress.Parse(c.String("compress")); err != nil {
			return cliutil.Usagef("--compress: %v", err)
		}
	}
	format := c.String("format")
	if format != "v2" && format != "v1" {
		return cliutil.Usagef("unknown --format %q (v1 or v2)", format)
	}
	// The input first: a missing input is the first thing to say.
	if err := cliutil.CheckInput(inName); err != nil {
		return err
	}
	if cliutil.IsStdout(outName) && cliutil.IsTerminal(os.Stdout) {
		return cliutil.Usagef("standard output is a terminal; crunch writes binary BMD: give an output file (crunch %s OUT.bmd) or redirect (crunch %s - > OUT.bmd)", inName, inName)
	}
	// Refuse a bad output before spooling a long standard input.
	if err := cliutil.CheckOutput(outName, c.Bool("force"), inName); err != nil {
		return err
	}
	if opt.KeepStrings && opt.HashPlatformNames {
		warn(c, "--hash-platform-names has no effect with --keep-strings, which keeps every name in the clear")
	}
	if kind != byName && byName != compress.None {
		warn(c, "%s: written %s as --compress %s asks, although its name says %s", outName, compressedText(kind), c.String("compress"), byName)
	}
	if other := otherCompression(outName); other != "" {
		warn(c, "%s: written %s, although its name says %s: crunch compresses with zstd (.zst) or gzip (.gz)", outName, compressedText(kind), other)
	}
	if c.Bool("stats") {
		opt.Phase = mainStarted.mark
	}
	heapAdvised()
	src, size, _, cleanup, err := cliutil.SeekableInput(inName, checkHead)
	if err != nil {
		return err
	}
	defer cleanup()
	out, err := cliutil.CreateOutput(outName, c.Bool("force"), inName)
	if err != nil {
		return err
	}
	defer out.Abort() // after Commit, does nothing
	// No fsync ahead of Commit's while the two passes keep both cores
	// busy (cliutil.Output.SyncAhead); convert turns them on for the last
	// quarter of pass 2, where they spare Commit's fsync its wait for a
	// journal commit. On the 134 MB dump, medians of 20 alternating runs
	// (2026-12-02): 216.5 ms against 222 ms without syncs ahead (the wait
	// after the last byte 6 against 21.5 ms), and 228 against 236.5 ms
	// with syncs ahead throughout.
	out.SyncAhead(false)
	st, bmdBytes, err := convert(c, src, size, out, kind, format, opt)
	if werr := out.Err(); werr != nil {
		// Writing failed (disk full, reader gone): the conversion's error
		// is only a consequence.
		return werr
	}
	if err != nil {
		return fmt.Errorf("%s: %w%s", inName, explainInput(err, src), out.Incomplete())
	}
	if err := out.Commit(); err != nil {
		return err
	}
	committed := mainStarted.now()
	for _, w := range st.Warnings {
		warn(c, "%s", w)
	}
	if c.Bool("stats") {
		printStats(os.Stderr, st, bmdBytes, out.Written(), kind)
		mainStarted.print(os.Stderr, committed)
	}
	return nil
}

// mainStarted is the clock of the run, whose phases --stats prints,
// started as package main is initialized: the last package to be, just
// before main runs.
var mainStarted = newPhaseClock()

// A phaseClock keeps when a run started, and when each phase of its
// crunch began (crunch.Options.Phase), with the processor time the
// process had taken by then, for --stats.
type phaseClock struct {
	start  instant
	phases []phaseStart
}

// A phaseStart is when a phase of the crunch began.
type phaseStart struct {
	phase crunch.Phase
	at    instant
}

// An instant is a moment of the run: the clock, and the processor time
// (cliutil.ProcessorTime) taken by then.
type instant struct {
	t   time.Time
	cpu time.Duration
}

// newPhaseClock returns a clock started now.
func newPhaseClock() *phaseClock {
	c := &phaseClock{}
	c.start = c.now()
	return c
}

// now returns the present instant.
func (c *phaseClock) now() instant {
	cpu, _ := cliutil.ProcessorTime()
	return instant{time.Now(), cpu}
}

// mark notes that phase p begins now.
func (c *phaseClock) mark(p crunch.Phase) {
	c.phases = append(c.phases, phaseStart{p, c.now()})
}

// print writes the run's time from main's start to end, the output
// committed, and how it went: before the first phase, each phase, and
// after PhaseDone; then the processor time over the same stretch, and
// the cores it kept busy on average, where the system tells it.
func (c *phaseClock) print(w io.Writer, end instant) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e6) }
	var b strings.Builder
	fmt.Fprintf(&b, "time:   %s ms from main's start to the output committed", ms(end.t.Sub(c.start.t)))
	if len(c.phases) > 0 {
		fmt.Fprintf(&b, ": %s ms before pass 1", ms(c.phases[0].at.t.Sub(c.start.t)))
	}
	for i, p := range c.phases {
		next := end.t
		if i+1 < len(c.phases) {
			next = c.phases[i+1].at.t
		}
		took := ms(next.Sub(p.at.t))
		if p.phase == crunch.PhaseDone {
			fmt.Fprintf(&b, ", %s ms after", took)
		} else {
			fmt.Fprintf(&b, ", %s %s ms", p.phase, took)
		}
	}
	if cpu := end.cpu - c.start.cpu; cpu > 0 {
		fmt.Fprintf(&b, "; processor time %s ms, %.2f cores busy", ms(cpu), float64(cpu)/float64(max(end.t.Sub(c.start.t), 1)))
	}
	fmt.Fprintln(w, b.String())
}

// otherCompression returns the compression an output name asks for that
// crunch does not write (out.bmd.xz: "xz"), or "".
func otherCompression(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".bz2":
		return "bzip2"
	case ".xz":
		return "xz"
	case ".lz4":
		return "lz4"
	case ".br":
		return "brotli"
	}
	return ""
}

// warn prints a warning, unless --quiet.
func warn(c *cli.Context, format string, a ...any) {
	if !c.Bool("quiet") {
		fmt.Fprintf(os.Stderr, "crunch: warning: "+format+"\n", a...)
	}
}

// options returns the crunch options the flags give.
func options(c *cli.Context) (crunch.Options, error) {
	opt := crunch.Options{KeepStrings: c.Bool("keep-strings"), KeepPrimitives: c.Bool("keep-primitives"),
		PreserveClasses: c.StringSlice("preserve-class"), Profile: c.String("profile"), Tool: version.Tool,
		HashPlatformNames: c.Bool("hash-platform-names")}
	for _, l := range c.StringSlice("label") {
		if err := bmd.CheckLabel(l); err != nil {
			return opt, cliutil.Usagef("--label: %v", err)
		}
		opt.Labels = append(opt.Labels, l)
	}
	if len(opt.Labels) > bmd.MaxLabels {
		return opt, cliutil.Usagef("--label: %d labels (at most %d)", len(opt.Labels), bmd.MaxLabels)
	}
	for _, k := range opt.PreserveClasses {
		if strings.TrimSpace(k) == "" {
			return opt, cliutil.Usagef("--preserve-class: an empty class name (give one such as com.example.Session)")
		}
	}
	if opt.Profile != "" && opt.Profile != "leak" {
		return opt, cliutil.Usagef("unknown --profile %q (the only profile is leak)", opt.Profile)
	}
	if h := c.String("drop-heap"); h != "" {
		for _, p := range strings.Split(h, ",") {
			p = strings.TrimSpace(p)
			if _, err := crunch.ParseHeapName(p); err != nil {
				return opt, cliutil.Usagef("--drop-heap: %v", err)
			}
			opt.DropHeaps = append(opt.DropHeaps, p)
		}
	}
	return opt, nil
}

// convert crunches src into out, compressed with kind, in BMD version
// format, showing progress; it returns the stats and the BMD's size before
// compression.
func convert(c *cli.Context, src io.ReadSeeker, size int64, out io.Writer, kind compress.Kind, format string, opt crunch.Options) (*crunch.Stats, int64, error) {
	prog := cliutil.NewProgress(c.Bool("quiet"), size)
	defer prog.Done()
	opt.Progress = func(pass int, done int64) {
		prog.Update(fmt.Sprintf("pass %d", pass), done)
		if o, ok := out.(*cliutil.Output); ok && pass == 2 && done >= size-size/4 {
			o.SyncAhead(true) // see run
		}
	}
	// 64 KiB: the BMD writer hands over 64 KiB or more at a time, which
	// pass through; the buffer gathers a compressor's small writes. Each
	// 4 KiB of a buffer costs a page fault when first written (1 MiB of
	// buffer: 256 faults, about 4 ms on the VM of 2026-12-02).
	bw := bufio.NewWriterSize(out, 64<<10)
	cw, err := compress.NewWriter(bw, kind)
	if err != nil {
		return nil, 0, err
	}
	bmdOut := &countingWriter{w: cw} // the BMD bytes, before compression
	var st *crunch.Stats
	if format == "v1" {
		var v1warn io.Writer = os.Stderr
		if c.Bool("quiet") {
			v1warn = nil
		}
		st, err = crunch.CrunchV1(src, bmdOut, opt, v1warn)
	} else {
		st, err = crunch.Crunch(src, bmdOut, opt)
	}
	if err == nil {
		err = cw.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	return st, bmdOut.n, err
}

func compressedText(k compress.Kind) string {
	if k == compress.None {
		return "uncompressed"
	}
	return "with " + string(k)
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// printStats prints st, with the real sizes of the output: bmdBytes of BMD
// (the whole file, header included) and written bytes after compression.
func printStats(w io.Writer, st *crunch.Stats, bmdBytes, written int64, kind compress.Kind) {
	fmt.Fprintf(w, "input:  %s, %d-byte IDs, %d bytes\n", cliutil.Printable(st.HPROFHeader.Version), st.HPROFHeader.IDSize, st.InBytes)
	keys := make([]string, 0, len(st.InRecords))
	for k := range st.InRecords {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if b, ok := st.InBytesBy[k]; ok {
			fmt.Fprintf(w, "  in  %-24s %10d records %12d bytes\n", k, st.InRecords[k], b)
		} else {
			fmt.Fprintf(w, "  in  %-24s %10d records\n", k, st.InRecords[k])
		}
	}
	keys = keys[:0]
	for k := range st.OutRecords {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  out %-24s %10d records %12d bytes\n", k, st.OutRecords[k], st.OutBytesBy[k])
	}
	pct := func(n int64) float64 { return 100 * float64(n) / float64(max(st.InBytes, 1)) }
	if kind == compress.None {
		fmt.Fprintf(w, "output: %d bytes of BMD, uncompressed (%.1f%% of input)\n", bmdBytes, pct(bmdBytes))
	} else {
		fmt.Fprintf(w, "output: %d bytes written, %s (%.1f%% of input); %d bytes of BMD before compression (%.1f%%)\n", written, kind, pct(written), bmdBytes, pct(bmdBytes))
	}
	fmt.Fprintf(w, "  %d objects, %d classes, %d strings (%d hashed, %d array names of a hashed element; %d STRING records nothing refers to left out), %d dropped with their heap, %d dangling IDs\n",
		st.Objects, st.Classes, st.Strings, st.Hashed, st.ArrayNames, st.Unreferenced, st.Dropped, st.Dangling)
}

// explainInput replaces the error for an input that is not an HPROF dump
// by what the input is, when it is recognised (a BMD file, an image, …).
func explainInput(err error, src io.ReadSeeker) error {
	if !errors.Is(err, hprof.ErrNotHPROF) {
		return err
	}
	if _, serr := src.Seek(0, io.SeekStart); serr != nil {
		return err
	}
	head := make([]byte, 64)
	n, _ := io.ReadFull(src, head)
	return explainHead(err, head[:n])
}

// explainHead is explainInput of an input that starts with head.
func explainHead(err error, head []byte) error {
	kind := cliutil.Sniff(head)
	switch kind {
	case "", "an HPROF heap dump":
		return err
	case "a BMD file":
		kind += " (decrunch turns it back into HPROF)"
	}
	return fmt.Errorf("not an HPROF heap dump: it is %s", kind)
}

// checkHead refuses an input to be spooled (compressed, or a pipe) whose
// first bytes, head, cannot start an HPROF dump, as crunch would once it
// was copied: a compressed file of another kind is refused at once.
func checkHead(head []byte) error {
	if _, err := hprof.NewReader(bytes.NewReader(head)); errors.Is(err, hprof.ErrNotHPROF) {
		return explainHead(err, head)
	}
	return nil
}
