// Command decrunch turns a BMD file back into an HPROF heap dump that
// analyzers open, recovering hashed names from the app's APK, DEX or JAR.
package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/heapcrunch/heapcrunch/apkstrings"
	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/decrunch"
	"github.com/heapcrunch/heapcrunch/internal/bigmem"
	"github.com/heapcrunch/heapcrunch/internal/cliutil"
	"github.com/heapcrunch/heapcrunch/internal/compress"
	"github.com/heapcrunch/heapcrunch/internal/cores"
	"github.com/heapcrunch/heapcrunch/internal/version"
)

const help = `Turn a BMD file (plain, zstd or gzip; version 2, or version 1 from the
2014 tools) back into an HPROF heap dump, with names recovered from the
app's own code where they were hashed.

Examples:
   decrunch dump.bmd --apk app.apk -o dump.hprof
   decrunch dump.bmd.zst --apk app.apk --mapping mapping.txt -o dump.hprof
   decrunch dump.bmd --jar lib.jar --jar /usr/lib/jvm/java-17-openjdk-amd64/jmods/java.base.jmod -o dump.hprof
   decrunch --salvage cut-off.bmd -o partial.hprof

Without -o (or with -o -) the HPROF goes to standard output, which must not
be a terminal. A new output file, or with --force an existing one, is
written to a temporary file beside it and renamed over it only when
complete; a symbolic link is followed and the file it points to replaced
(the link stays). A FIFO or a character device (/dev/null) is written in
place and needs no --force, since nothing is overwritten; a block device
needs --force. The output is never a file decrunch reads (the BMD, a name
source, the mapping), also through links or redirections, even with
--force. A new file's permissions follow the umask; a replaced one keeps
its own.

Name sources: --apk takes an APK (classes*.dex inside), --dex a DEX file,
--jar a JAR, AAR, .jmod, .class file or folder of .class files. A source
given with the wrong flag (a JAR with --apk) is a usage error that names
the right flag. Of a source's names, decrunch keeps those whose hash the
BMD holds (version 2, xxhash64), which it reads for them first; of a
--mapping, the classes whose names it holds, hashed or in the clear.

Strings and primitive arrays have no text in a BMD: their characters are
written as zeros. An enum constant's name is the exception: it is the name
of the static field that holds the constant, which the BMD keeps, and
decrunch writes it into the constant's name String (version 2; a renamed
field needs the build's --mapping), where analyzers read it (LeakCanary
finds a destroyed androidx Fragment by its lifecycle state's name). So is
an Android app's main thread's name, "main": the thread of
android.os.Looper.sMainLooper, where its name has 4 characters (LeakCanary
ignores that thread's locals by its name). And so are the texts of
android.os.Build.MANUFACTURER and Build.ID where the BMD's labels give them
(crunch --label Build.MANUFACTURER=samsung --label Build.ID=..., as the app
passes them on the device) or decrunch's --label gives them (over the
file's), where the String has the label's length (LeakCanary applies some
known-library-leak matchers on one manufacturer's devices only); and the
app's process name from the label ApplicationInfo.processName, in the
String of ActivityThread.sCurrentActivityThread.mBoundApplication.appInfo
.processName (LeakCanary's metadata shows it).

With --salvage, a truncated or damaged BMD (plain or compressed) gives an
HPROF of everything before the damage: every block of the BMD whose checksum
holds, with the names and class definitions its objects need.

Cores: with more than one core for Go (GOMAXPROCS) and 262,144 objects
or more (a version 1 file, which does not say, counts as large), the
second pass times a few stretches of the file on two goroutines and on
one, and goes on the faster way (on the 2-core machines where it was
measured: two with the other core free and near, mostly one with it busy,
one where the cores were far apart); a first round that finds one way 1.5
times as fast ends the timing. The output is the same either way.
HEAPCRUNCH_PIPELINE=on or off forces two goroutines or one.

Exit codes: 0 done, the input was whole; 1 bad input or failed conversion
(no output file is left behind), with --salvage also when nothing of the
heap came before the damage; 2 usage error; 3 --salvage wrote a partial
output (the message says what it holds and where the damage is); 128+N
ended by signal N, after removing temporary files: 130 SIGINT, 143 SIGTERM,
129 SIGHUP, 131 SIGQUIT; 141 the output's reader (pipe or FIFO) went away
before the end.`

func main() {
	// Go's pace of the collector (GOGC=100), unlike crunch's: at 800 the
	// BMD of the original tools (version 1) took 92 to 95 MB to decrunch
	// where it takes 30 (docs/measurements.md, "GOGC 800").
	heapAdvised = adviseHeap()
	os.Exit(cliutil.Run(app(), os.Args))
}

// heapAdvised waits for the advice of the Go heap for huge pages
// (bigmem.HugeHeap, 2.0 to 2.5 ms), which main starts beside the reading
// and checking of the command line, as crunch's does; run waits for it
// before it loads names and converts, which allocate.
var heapAdvised = func() {}

// adviseHeap starts bigmem.HugeHeap beside what main does next, where Go
// has two cores (cores.Alongside), and returns a function that waits for
// it.
func adviseHeap() (wait func()) {
	advised := cores.Alongside(func() error {
		bigmem.HugeHeap(bigmem.HeapAdvice)
		return nil
	})
	return func() { _ = advised() }
}

func app() *cli.App {
	return &cli.App{
		Name:            "decrunch",
		Usage:           "BMD -> HPROF heap dump, names recovered from the app",
		UsageText:       "decrunch [options] INPUT.bmd -o OUTPUT.hprof   (- for standard input or output)",
		Description:     help,
		Version:         version.Version,
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "the HPROF file to write"},
			&cli.StringSliceFlag{Name: "apk", Usage: "recover names from every classes*.dex of this APK (repeatable)"},
			&cli.StringSliceFlag{Name: "dex", Usage: "recover names from this DEX file (repeatable)"},
			&cli.StringSliceFlag{Name: "jar", Usage: "recover names from this JAR, AAR, JDK .jmod, or folder of .class files (repeatable)"},
			&cli.StringSliceFlag{Name: "strings", Usage: "recover names from this text file, one per line (repeatable)"},
			&cli.StringFlag{Name: "mapping", Usage: "ProGuard/R8 mapping.txt: write the original class, field and method names for obfuscated ones"},
			&cli.StringSliceFlag{Name: "label", Usage: "Build.MANUFACTURER=TEXT, Build.ID=TEXT (the device's) or ApplicationInfo.processName=TEXT (the app's process), for a BMD crunched without them: as if crunch --label had stored it, decrunch writes TEXT into that String (repeatable; over the file's own)"},
			&cli.BoolFlag{Name: "salvage", Usage: "from a truncated or damaged BMD, write every complete record before the damage"},
			&cli.BoolFlag{Name: "stats", Usage: "print how many names were recovered, from which source, and collisions"},
			&cli.StringFlag{Name: "max-output", Usage: "refuse to write an HPROF larger than this, or to decompress a compressed or piped BMD beyond it (e.g. 200G; 0: no limit; default: the larger of 4 GiB and 100 times the uncompressed BMD, and for the decompression 100 times the compressed bytes read), since a few bytes of a damaged or crafted BMD can ask for terabytes"},
			&cli.BoolFlag{Name: "info", Usage: "print the file's metadata (labels, counts, the dump's header) and exit, without converting: decrunch --info FILE"},
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "replace an existing output file (a FIFO or character device needs none)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress or warnings"},
		},
		Action: run,
	}
}

// nameFlags are the flags of the name sources.
var nameFlags = []string{"apk", "dex", "jar", "strings"}

// checkSources checks every name source given and the mapping
// (checkSource), before the input is read: a missing or wrong source is
// said at once.
func checkSources(c *cli.Context) error {
	for _, flag := range nameFlags {
		for _, path := range c.StringSlice(flag) {
			if err := checkSource(flag, path); err != nil {
				return err
			}
		}
	}
	if p := c.String("mapping"); p != "" {
		return checkSource("mapping", p)
	}
	return nil
}

// loadNames reads the candidate names of the built-in list and of the
// name sources given, keeping those whose hash is in want, if not nil
// (decrunch.NameTable.Want).
func loadNames(c *cli.Context, want map[uint64]bool) (*decrunch.NameTable, error) {
	t := decrunch.NewNameTable()
	t.Want(want)
	// Primitive types and the names analyzers look up, in every spelling:
	// files of the original 2014 cruncher hash them, and analyzers need
	// them (VisualVM refuses primitive arrays without their class names).
	builtin := t.Source("built-in names")
	for _, n := range decrunch.BuiltinNames() {
		apkstrings.Spellings(n, builtin)
	}
	type src struct {
		flag string
		read func(path string, emit func(string)) (int, error)
	}
	readDEX := func(path string, emit func(string)) (int, error) {
		f, err := os.Open(path)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return 0, err
		}
		return apkstrings.ReadDEX(f, st.Size(), emit)
	}
	for _, s := range []src{{"apk", apkstrings.ReadAPK}, {"dex", readDEX}, {"jar", apkstrings.ReadJAR}, {"strings", apkstrings.ReadStringsFile}} {
		for _, path := range c.StringSlice(s.flag) {
			add := t.Source(path)
			n, err := s.read(path, func(x string) { apkstrings.Spellings(x, add) })
			if err != nil {
				return nil, sourceError(s.flag, path, err)
			}
			if n == 0 && !c.Bool("quiet") {
				fmt.Fprintf(os.Stderr, "decrunch: warning: --%s %s: no names found in it%s: nothing recovered from it\n", s.flag, path, emptyHint(s.flag, path))
			}
		}
	}
	return t, nil
}

// fileNames returns the names a version 2 file holds
// (decrunch.ReadFileNames, read from its start): all that loadNames need
// keep of the name sources' candidates, and loadMapping of the mapping's
// classes. It leaves src at its start. It returns nil, keep every
// candidate and class, for a version 1 file, where neither a name source
// nor a mapping is given, for a file hashed with another hash than
// xxhash64 (ReadFileNames), and where the file cannot be read to its end
// (the conversion then says why, or --salvage writes what comes before the
// damage). The corpus's DEX of 32,768 classes gives 524,373 candidates:
// decrunch of the dialer dump's BMD with it took 151 to 516 ms and 70 to
// 78 MB keeping them all, 60 to 84 ms and 14 to 16 MB keeping those the
// file hashed (7 alternating runs, 2026-12-05).
func fileNames(c *cli.Context, src io.ReadSeeker, v1 bool) (*decrunch.FileNames, error) {
	given := c.String("mapping") != ""
	for _, flag := range nameFlags {
		given = given || len(c.StringSlice(flag)) > 0
	}
	if v1 || !given {
		return nil, nil
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	fn, err := decrunch.ReadFileNames(src)
	if err != nil {
		fn = nil
	}
	_, err = src.Seek(0, io.SeekStart)
	return fn, err
}

// emptyHint says why a name source gave no names, when that can be told.
func emptyHint(flag, path string) string {
	what, _ := sourceKind(path)
	switch {
	case flag == "apk" && what == "a zip archive":
		return " (no classes*.dex entry: an APK without code?)"
	case flag == "jar" && (what == "a zip archive" || what == "a folder"):
		return " (no .class files)"
	}
	return ""
}

// sourceKind says what a name source is, for one given with the wrong
// flag: what it is ("a JAR (a zip archive of .class files)") and the flag
// that reads it ("" when none does, or when that cannot be told).
func sourceKind(path string) (what, flag string) {
	switch k := cliutil.SniffFile(path); k {
	case "a folder", "a Java class file", "a JDK jmod file":
		return k, "jar"
	case "a DEX file":
		return k, "dex"
	case "a zip archive":
		zr, err := zip.OpenReader(path)
		if err != nil {
			return k, ""
		}
		defer zr.Close()
		var dex, class bool
		for _, f := range zr.File {
			n := f.Name
			switch {
			case strings.HasSuffix(n, ".dex"):
				dex = true
			case strings.HasSuffix(n, ".class"), n == "classes.jar", strings.HasPrefix(n, "libs/") && strings.HasSuffix(n, ".jar"):
				class = true
			}
		}
		switch {
		case dex && !class:
			return "an APK (a zip archive with classes.dex)", "apk"
		case class && !dex:
			return "a JAR (a zip archive of .class files)", "jar"
		}
		return k, ""
	default:
		return k, ""
	}
}

// expected lists what each flag reads, as SniffFile names it.
var expected = map[string][]string{
	"apk": {"a zip archive"},
	"dex": {"a DEX file"},
	"jar": {"a zip archive", "a Java class file", "a JDK jmod file", "a folder"},
}

// checkSource rejects a name source that is missing, empty, a folder (but
// for --jar), of a kind another flag reads (a usage error naming that
// flag), or, for the text sources, a binary file.
func checkSource(flag, path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && flag == "jar":
		return fmt.Errorf("--%s %s: no such file or folder", flag, path)
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("--%s %s: no such file", flag, path)
	case err != nil:
		return fmt.Errorf("--%s %s: %w", flag, path, err)
	case st.IsDir() && flag == "jar":
		return nil
	case st.IsDir() && (flag == "apk" || flag == "dex" || flag == "strings"):
		return cliutil.Usagef("--%s %s: is a folder; for a folder of .class files use --jar %s", flag, path, path)
	case st.IsDir():
		return fmt.Errorf("--%s %s: is a directory", flag, path)
	case !st.Mode().IsRegular() && (flag == "apk" || flag == "dex" || flag == "jar"):
		// Zip archives and DEX files are read at offsets their ends give:
		// a pipe's bytes cannot be.
		what := "a device"
		switch {
		case st.Mode()&fs.ModeNamedPipe != 0:
			what = "a pipe"
		case st.Mode()&fs.ModeSocket != 0:
			what = "a socket"
		}
		return cliutil.Usagef("--%s %s: is %s, not a file: give the file itself (only --strings and --mapping read a pipe)", flag, path, what)
	case st.Mode().IsRegular() && st.Size() == 0:
		// A pipe (--strings <(...)) has no size: only a regular file is
		// known to be empty.
		return fmt.Errorf("--%s %s: empty file", flag, path)
	}
	what, right := sourceKind(path)
	if right != "" && right != flag && flag != "mapping" {
		if flag == "strings" {
			return cliutil.Usagef("--%s %s: not a text file: it is %s: use --%s %s", flag, path, what, right, path)
		}
		return cliutil.Usagef("--%s %s: it is %s, not %s: use --%s %s", flag, path, what, flagReads[flag], right, path)
	}
	if flag == "strings" || flag == "mapping" {
		if kind := cliutil.SniffFile(path); kind != "" {
			return fmt.Errorf("--%s %s: not a text file: it is %s", flag, path, kind)
		}
	}
	return nil
}

// flagReads says what each name source flag reads, for messages.
var flagReads = map[string]string{
	"apk": "an APK",
	"dex": "a DEX file",
	"jar": "a JAR, AAR, jmod or class file",
}

// sourceError says what is wrong with a name source, without repeating its
// path, and what the file is when it is of the wrong kind.
func sourceError(flag, path string, err error) error {
	msg := err.Error()
	var fe *apkstrings.FormatError
	if errors.As(err, &fe) {
		msg = fe.Msg
		if fe.Entry != "" {
			msg = fe.Entry + ": " + msg
		}
		if fe.Offset >= 0 {
			msg += fmt.Sprintf(" at offset %d", fe.Offset)
		}
	}
	kind := cliutil.SniffFile(path)
	if rest, ok := strings.CutPrefix(msg, "not a zip archive: "); ok && (kind == "a zip archive" || kind == "a JDK jmod file") {
		// It starts as one: archive/zip found no central directory.
		msg = "truncated or damaged zip archive (" + rest + ")"
	}
	if kind != "" && !slices.Contains(expected[flag], kind) {
		msg += " (it is " + kind + ")"
	}
	return fmt.Errorf("--%s %s: %s", flag, path, msg)
}

func run(c *cli.Context) error {
	switch n := c.NArg(); {
	case n == 2 && !c.IsSet("output"):
		return cliutil.Usagef("the output is given with -o: decrunch %s -o %s (got %s)", c.Args().Get(0), c.Args().Get(1), cliutil.Plural(n, "argument"))
	case n != 1:
		return cliutil.Usagef("need one INPUT.bmd (got %s)", cliutil.Plural(n, "argument"))
	}
	inName, outName := c.Args().Get(0), c.String("output")
	// The input first: a missing input is the first thing to say.
	if err := cliutil.CheckInput(inName); err != nil {
		return err
	}
	if c.Bool("info") {
		if c.IsSet("output") {
			return cliutil.Usagef("--info prints the metadata and writes no file: leave out -o %s", outName)
		}
		return info(inName, os.Stdout)
	}
	if err := checkOutput(c, inName, outName); err != nil {
		return err
	}
	heapAdvised()
	if err := checkSources(c); err != nil {
		return err
	}
	opt, maxOut, err := options(c)
	if err != nil {
		return err
	}
	// Decrunch reads its input twice (the names first): a compressed input
	// or standard input that is not a plain file is decompressed to a
	// temporary file. With --salvage, what decompresses before damage is
	// kept.
	src, size, kind, cleanup, damage, err := cliutil.SeekableInputPartial(inName, spoolLimit(maxOut), checkHead)
	if err != nil {
		return explainSpoolLimit(err, maxOut)
	}
	defer cleanup()
	opt.MaxOutput = maxOut
	if maxOut < 0 {
		opt.MaxOutput = defaultMaxOutput(size)
	}
	if damage != nil && !opt.Salvage {
		return fmt.Errorf("%w (--salvage writes what precedes the damage)", damage)
	}
	meta, v1, err := readHeader(inName, src, damage)
	if err != nil {
		return err
	}
	fn, err := fileNames(c, src, v1)
	if err != nil {
		return err
	}
	// The mapping before the name sources, whose reading takes longer: a
	// malformed mapping is said sooner.
	mapping, err := loadMapping(c, fn)
	if err != nil {
		return err
	}
	if mapping != nil {
		opt.Mapping = mapping
	}
	var want map[uint64]bool
	if fn != nil {
		want = fn.Hashed
	}
	names, err := loadNames(c, want)
	if err != nil {
		return err
	}
	opt.Names = names.ForHash(meta.Hash)
	if opt.Names == nil && !c.Bool("quiet") {
		fmt.Fprintf(os.Stderr, "decrunch: warning: %s: names hashed with %q, which this decrunch does not know: none recovered\n", inName, meta.Hash)
	}
	st, err := convert(c, inName, outName, src, opt)
	if err != nil {
		return explainFailure(err, inName, kind, size, maxOut)
	}
	if !c.Bool("quiet") {
		for _, w := range st.Warnings {
			fmt.Fprintf(os.Stderr, "decrunch: %s: BMD v1: %s\n", inName, w)
		}
	}
	if c.Bool("stats") {
		printStats(c, st, names, mapping, v1)
	}
	switch {
	case st.Salvaged != nil:
		return &cliutil.PartialError{Msg: fmt.Sprintf("%s: damaged: partial output %s: %d objects (classes included) and %d roots from before the damage: %v",
			inName, outName, st.Objects, st.Roots, st.Salvaged)}
	case damage != nil:
		return &cliutil.PartialError{Msg: fmt.Sprintf("%s: the BMD inside is whole, but %v", inName, damage)}
	}
	return nil
}

// inputs returns every file decrunch reads: the BMD and the name sources
// and mapping, none of which the output may replace.
func inputs(c *cli.Context, inName string) []string {
	in := []string{inName}
	for _, flag := range nameFlags {
		in = append(in, c.StringSlice(flag)...)
	}
	if m := c.String("mapping"); m != "" {
		in = append(in, m)
	}
	return in
}

// checkOutput refuses an output that cannot be written, before the name
// sources are read, which takes a while.
func checkOutput(c *cli.Context, inName, outName string) error {
	if cliutil.IsStdout(outName) && cliutil.IsTerminal(os.Stdout) {
		return cliutil.Usagef("standard output is a terminal; decrunch writes a binary HPROF file: give -o OUTPUT.hprof or redirect (decrunch %s > OUTPUT.hprof)", inName)
	}
	if err := cliutil.CheckOutput(outName, c.Bool("force"), inputs(c, inName)...); err != nil {
		return err
	}
	if k := compress.ForName(strings.ToLower(outName)); k != compress.None && !c.Bool("quiet") {
		fmt.Fprintf(os.Stderr, "decrunch: warning: %s: written uncompressed, although its name says %s (analyzers read plain HPROF)\n", outName, k)
	}
	return nil
}

// options returns the conversion's options from the flags, and the output
// limit (-1: the default, which depends on the input's size).
func options(c *cli.Context) (decrunch.Options, int64, error) {
	opt := decrunch.Options{Salvage: c.Bool("salvage")}
	for _, l := range c.StringSlice("label") {
		if err := bmd.CheckLabel(l); err != nil {
			return opt, 0, cliutil.Usagef("--label: %v", err)
		}
		if k, _, _ := strings.Cut(l, "="); !decrunch.TextLabel(k) {
			return opt, 0, cliutil.Usagef("--label %s: decrunch takes only Build.MANUFACTURER=TEXT, Build.ID=TEXT and ApplicationInfo.processName=TEXT (other labels are crunch's to store)", l)
		}
		opt.Labels = append(opt.Labels, l)
	}
	maxOut := int64(-1)
	if c.IsSet("max-output") {
		var err error
		if maxOut, err = cliutil.ParseSize(c.String("max-output")); err != nil {
			return opt, 0, cliutil.Usagef("--max-output: %v", err)
		}
	}
	return opt, maxOut, nil
}

// loadMapping parses the --mapping file, if given, keeping the classes
// whose names the file holds (decrunch.FileNames.HoldsClass), or every
// class where fn is nil.
func loadMapping(c *cli.Context, fn *decrunch.FileNames) (*apkstrings.Mapping, error) {
	p := c.String("mapping")
	if p == "" {
		return nil, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("--mapping %s: %w", p, err)
	}
	defer f.Close()
	var keep func(string) bool
	if fn != nil {
		keep = fn.HoldsClass
	}
	m, err := apkstrings.ParseMappingOf(f, keep)
	if err != nil {
		return nil, sourceError("mapping", p, err)
	}
	if m.ClassLines() == 0 && !c.Bool("quiet") {
		fmt.Fprintf(os.Stderr, "decrunch: warning: --mapping %s: no class mapping found in it (lines such as \"com.example.Main -> a:\"): nothing renamed\n", p)
	}
	return m, nil
}

// readHeader reads the header of the BMD in src (version 1 or 2), and
// rewinds it; a file of another kind is named.
func readHeader(inName string, src io.ReadSeeker, damage error) (meta bmd.Metadata, v1 bool, err error) {
	head := make([]byte, 64)
	nh, _ := io.ReadFull(src, head)
	head = head[:nh]
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return meta, false, err
	}
	var r decrunch.Source
	if r, v1, err = decrunch.OpenSource(src, head); err == nil {
		meta = r.Metadata()
	}
	if err == nil {
		return meta, v1, nil
	}
	if damage != nil {
		return meta, v1, damage
	}
	return meta, v1, fmt.Errorf("%s: %w", inName, explainHead(err, head))
}

// explainHead replaces the error for an input that is not a BMD file, and
// starts with head, by what the input is, when it is recognised (an HPROF
// dump, an image, …).
func explainHead(err error, head []byte) error {
	if what := cliutil.Sniff(head); errors.Is(err, bmd.ErrNotBMD) && what != "" && what != "a BMD file" {
		if what == "an HPROF heap dump" {
			what += " (crunch turns it into BMD)"
		}
		return fmt.Errorf("not a BMD file: it is %s", what)
	}
	return err
}

// checkHead refuses an input to be spooled (compressed, or a pipe) whose
// first bytes, head, cannot start a BMD file, as readHeader would once it
// was copied: a compressed bomb of zeros is refused at once rather than
// after the spool limit's gigabytes.
func checkHead(head []byte) error {
	if _, _, err := decrunch.OpenSource(bytes.NewReader(head), head); errors.Is(err, bmd.ErrNotBMD) {
		return explainHead(err, head)
	}
	return nil
}

// convert decrunches src to the output, which it commits when there is
// something to keep: with --salvage, nothing is written when nothing of
// the heap came before the damage.
func convert(c *cli.Context, inName, outName string, src io.ReadSeeker, opt decrunch.Options) (*decrunch.Stats, error) {
	out, err := cliutil.CreateOutput(outName, c.Bool("force"), inputs(c, inName)...)
	if err != nil {
		return nil, err
	}
	defer out.Abort() // after Commit, does nothing
	st, err := decrunch.Decrunch(src, out, opt)
	if werr := out.Err(); werr != nil {
		// Writing failed (disk full, reader gone): the conversion's error
		// is only a consequence.
		return nil, werr
	}
	if err != nil {
		return nil, &conversionError{err, out.Incomplete()}
	}
	if st.Salvaged != nil && st.Objects == 0 && st.Roots == 0 {
		return nil, fmt.Errorf("%s: nothing of the heap dump before the damage, no output written: %v", inName, st.Salvaged)
	}
	return st, out.Commit()
}

// conversionError is an error of decrunch itself, with what the output
// holds (for standard output or a FIFO, written as it went).
type conversionError struct {
	err        error
	incomplete string
}

func (e *conversionError) Error() string { return e.err.Error() + e.incomplete }
func (e *conversionError) Unwrap() error { return e.err }

// explainFailure words a failed conversion for the user.
func explainFailure(err error, inName string, kind compress.Kind, size, maxOut int64) error {
	var ce *conversionError
	if !errors.As(err, &ce) {
		return err
	}
	var le *decrunch.OutputLimitError
	if errors.As(err, &le) {
		how := "--max-output"
		if maxOut < 0 {
			how = fmt.Sprintf("the default limit, the larger of 4 GiB and 100 times the BMD's %s (real dumps come to 3 to 35 times; --max-output SIZE raises it, 0 removes it)", cliutil.FormatSize(size))
		}
		return fmt.Errorf("%s: the HPROF would be larger than %s, %s: no output written; if the file is a real dump, raise the limit", inName, cliutil.FormatSize(le.Limit), how)
	}
	inner := ce.err
	var fe *bmd.FormatError
	if kind != compress.None && !errors.As(inner, &fe) && errors.Is(inner, io.ErrUnexpectedEOF) {
		inner = fmt.Errorf("truncated or damaged %s data: %w", kind, inner)
	}
	return fmt.Errorf("%s: %w%s", inName, inner, ce.incomplete)
}

// printStats prints, on standard error, what --stats shows.
func printStats(c *cli.Context, st *decrunch.Stats, names *decrunch.NameTable, mapping *apkstrings.Mapping, v1 bool) {
	fmt.Fprintf(os.Stderr, "strings: %d (%d in the clear, %d recovered, %d not recovered, %d array names made of their element name)\n", st.Strings, st.Clear, st.Recovered, st.Missing, st.ArrayNames)
	from := names.RecoveredFrom()
	for _, k := range slices.Sorted(maps.Keys(from)) {
		fmt.Fprintf(os.Stderr, "  recovered from %s: %d\n", k, from[k])
	}
	kept := "distinct"
	if names.Filtered() {
		kept = "of them names the file hashed"
	}
	if v1 {
		fmt.Fprintf(os.Stderr, "candidates: %d read, %d %s, %d Java hash collisions (same hash and length) between different candidates\n", names.Candidates, names.Len(), kept, names.JavaCollisions)
	} else {
		fmt.Fprintf(os.Stderr, "candidates: %d read, %d %s, %d hash collisions between different candidates\n", names.Candidates, names.Len(), kept, names.Collisions)
	}
	if mapping != nil {
		fmt.Fprintf(os.Stderr, "mapping: %d class lines read, %d classes kept, renamed %d class, %d field and %d method name uses\n", mapping.ClassLines(), mapping.Classes(), st.RenamedClasses, st.RenamedFields, st.RenamedMethods)
	}
	fmt.Fprintf(os.Stderr, "objects: %d, roots: %d, HPROF bytes: %d\n", st.Objects, st.Roots, st.OutBytes)
	fmt.Fprintf(os.Stderr, "enum constants' names written back from their static fields' names: %d Strings\n", st.EnumNames)
	fmt.Fprintf(os.Stderr, "the main thread's name written back (Looper.sMainLooper's thread, \"main\"): %d Strings\n", st.ThreadNames)
	fmt.Fprintf(os.Stderr, "android.os.Build's texts written back from the labels Build.MANUFACTURER and Build.ID: %d Strings\n", st.BuildTexts)
	fmt.Fprintf(os.Stderr, "the app's process name written back from the label ApplicationInfo.processName: %d Strings\n", st.ProcessNames)
}

// info prints what the header of a BMD file says, reading nothing else:
// the format version, the original dump's header, the options and tool
// that wrote it, its labels and its counts.
func info(inName string, w io.Writer) error {
	in, err := cliutil.OpenInput(inName)
	if err != nil {
		return err
	}
	defer in.Close()
	dec, kind, err := compress.NewReader(in)
	if err != nil {
		return fmt.Errorf("%s: %w", inName, err)
	}
	defer dec.Close()
	br := bufio.NewReaderSize(dec, 64<<10)
	head, _ := br.Peek(64)
	r, v1, err := decrunch.OpenSource(br, head)
	if err != nil { // nothing printed: a failure writes only its message
		if what := cliutil.Sniff(head); errors.Is(err, bmd.ErrNotBMD) && what != "" && what != "a BMD file" {
			err = fmt.Errorf("not a BMD file: it is %s", what)
		}
		return fmt.Errorf("%s: %w", inName, err)
	}
	fmt.Fprintf(w, "file: %s\n", inName)
	if kind != compress.None {
		fmt.Fprintf(w, "compression: %s\n", kind)
	}
	m := r.Metadata()
	if v1 {
		fmt.Fprintf(w, "format: BMD version 1 (the original 2014 tools)\n")
	} else {
		fmt.Fprintf(w, "format: BMD version %d\n", bmd.Version2)
	}
	printMeta(w, &m)
	return nil
}

func printMeta(w io.Writer, m *bmd.Metadata) {
	line := func(k, v string) { // v from the file: forged, it could hold escape sequences
		if v != "" {
			fmt.Fprintf(w, "%s: %s\n", k, cliutil.Printable(v))
		}
	}
	line("hprof_version", m.HPROFVersion)
	fmt.Fprintf(w, "id_size: %d\n", m.IDSize)
	if m.Timestamp != 0 {
		fmt.Fprintf(w, "timestamp: %d (%s)\n", m.Timestamp, time.UnixMilli(int64(m.Timestamp)).UTC().Format(time.RFC3339))
	}
	line("hash", m.Hash)
	line("options", m.Options)
	line("tool", m.Tool)
	for _, l := range m.Labels {
		line("label", l)
	}
	fmt.Fprintf(w, "objects: %d\nclasses: %d\nstrings: %d\n", m.Objects, m.Classes, m.Strings)
	if m.Alignment != 0 {
		fmt.Fprintf(w, "alignment: %d\n", m.Alignment)
	}
	if m.UncompressedRefs {
		fmt.Fprintf(w, "uncompressed_refs: true\n")
	}
}

// spoolLimit returns the bound on what a compressed or streamed input may
// decompress to, given the output limit (-1: the default): the HPROF
// written from a BMD is larger than the BMD (each record grows: fixed-size
// IDs, record headers), so a BMD beyond the output limit cannot give an
// HPROF within it. The default output limit depends on the BMD's size,
// known only once decompressed: until then the default is taken of the
// compressed bytes read, which bounds what a few bytes of compressed data
// can fill the disk with.
func spoolLimit(maxOut int64) func(read int64) int64 {
	if maxOut >= 0 {
		return func(int64) int64 { return maxOut } // 0: none
	}
	return defaultMaxOutput
}

// explainSpoolLimit words a *cliutil.SpoolLimitError for the user.
func explainSpoolLimit(err error, maxOut int64) error {
	var se *cliutil.SpoolLimitError
	if !errors.As(err, &se) {
		return err
	}
	how := "--max-output"
	if maxOut < 0 {
		how = "the default limit, the larger of 4 GiB and 100 times the compressed bytes read"
	}
	return fmt.Errorf("%v, beyond %s: its HPROF would be larger still; no output written (--max-output SIZE raises the limit, 0 removes it)", se, how)
}

// defaultMaxOutput is the output limit for a BMD of size bytes: the larger
// of 4 GiB and 100 times its size. Real dumps give HPROF files 3 to 35
// times their BMD (the corpus and fixture dumps 3.5 to 32; a synthetic
// 4.5 GiB dump with a 2.5 GiB array 35), so only a file that asks for far
// more than its bytes can hold meets it.
func defaultMaxOutput(size int64) int64 {
	return max(4<<30, 100*size)
}
