// Command decrunch turns a BMD file back into an HPROF heap dump that
// analyzers open, recovering hashed names from the app's APK, DEX or JAR.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/heapcrunch/heapcrunch/apkstrings"
	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/decrunch"
	"github.com/heapcrunch/heapcrunch/internal/cliutil"
	"github.com/heapcrunch/heapcrunch/internal/compress"
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

Without -o (or with -o -) the HPROF goes to standard output.
Exit codes: 0 done; 1 bad input or failed conversion (no output is left
behind); 2 usage error; 130 interrupted (no output is left behind).`

func main() { os.Exit(cliutil.Run(app(), os.Args)) }

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
			&cli.BoolFlag{Name: "salvage", Usage: "from a truncated or damaged BMD, write every complete record before the damage"},
			&cli.BoolFlag{Name: "stats", Usage: "print how many names were recovered, from which source, and collisions"},
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "overwrite an existing output file"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress or warnings"},
		},
		Action: run,
	}
}

func loadNames(c *cli.Context) (*decrunch.NameTable, error) {
	t := decrunch.NewNameTable()
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
			if err := checkSource(s.flag, path); err != nil {
				return nil, err
			}
			add := t.Source(path)
			n, err := s.read(path, func(x string) { apkstrings.Spellings(x, add) })
			if err != nil {
				return nil, sourceError(s.flag, path, err)
			}
			if n == 0 && !c.Bool("quiet") {
				fmt.Fprintf(os.Stderr, "decrunch: warning: --%s %s: no names found in it\n", s.flag, path)
			}
		}
	}
	return t, nil
}

// checkSource rejects a name source that is missing, empty, a folder (but
// for --jar), or, for the text sources, a binary file.
func checkSource(flag, path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("--%s %s: no such file", flag, path)
	case err != nil:
		return fmt.Errorf("--%s %s: %w", flag, path, err)
	case st.IsDir():
		if flag == "jar" {
			return nil
		}
		return fmt.Errorf("--%s %s: is a directory", flag, path)
	case st.Size() == 0:
		return fmt.Errorf("--%s %s: empty file", flag, path)
	}
	if flag == "strings" || flag == "mapping" {
		if kind := cliutil.SniffFile(path); kind != "" {
			return fmt.Errorf("--%s %s: not a text file: it is %s", flag, path, kind)
		}
	}
	return nil
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
	if kind := cliutil.SniffFile(path); kind != "" {
		msg += " (it is " + kind + ")"
	}
	return fmt.Errorf("--%s %s: %s", flag, path, msg)
}

func run(c *cli.Context) error {
	if c.NArg() != 1 {
		return cliutil.Usagef("need one INPUT.bmd (got %d arguments)", c.NArg())
	}
	inName, outName := c.Args().Get(0), c.String("output")
	if outName == "-" && c.IsSet("output") == false && isTerminal(os.Stdout) {
		return cliutil.Usagef("give -o OUTPUT.hprof (standard output is a terminal)")
	}
	if err := cliutil.CheckOutput(outName, c.Bool("force"), inName); err != nil {
		return err // before the name sources are read, which takes a while
	}
	names, err := loadNames(c)
	if err != nil {
		return err
	}
	opt := decrunch.Options{Names: names, Salvage: c.Bool("salvage")}
	if p := c.String("mapping"); p != "" {
		if err := checkSource("mapping", p); err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("--mapping %s: %w", p, err)
		}
		m, err := apkstrings.ParseMapping(f)
		f.Close()
		if err != nil {
			return sourceError("mapping", p, err)
		}
		opt.Mapping = m
	}
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
	br := bufio.NewReaderSize(dec, 1<<20)
	head, _ := br.Peek(64)
	var r decrunch.Source
	var v1 *decrunch.V1Source
	if len(head) > 0 && head[0] == bmd.Version1 {
		// BMD version 1, from the original 2014 tools (or crunch --format v1)
		v1, err = decrunch.NewV1Source(br)
		r = v1
	} else {
		r, err = bmd.NewReader(br)
	}
	if err == nil {
		opt.Names = names.ForHash(r.Metadata().Hash)
		if opt.Names == nil && !c.Bool("quiet") {
			fmt.Fprintf(os.Stderr, "decrunch: %s: names hashed with %q, which this decrunch does not know: none recovered\n", inName, r.Metadata().Hash)
		}
	}
	if err != nil {
		if what := cliutil.Sniff(head); errors.Is(err, bmd.ErrNotBMD) && what != "" && what != "a BMD file" {
			if what == "an HPROF heap dump" {
				what += " (crunch turns it into BMD)"
			}
			err = fmt.Errorf("not a BMD file: it is %s", what)
		}
		return fmt.Errorf("%s: %w", inName, err)
	}
	out, err := cliutil.CreateOutput(outName, c.Bool("force"), inName)
	if err != nil {
		return err
	}
	st, err := decrunch.Decrunch(r, out, opt)
	if err == nil {
		err = out.Commit()
	}
	if err != nil {
		out.Abort()
		var fe *bmd.FormatError
		if kind != compress.None && !errors.As(err, &fe) && errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("truncated or damaged %s data: %w", kind, err)
		}
		return fmt.Errorf("%s: %w", inName, err)
	}
	if v1 != nil {
		st.Warnings = append(st.Warnings, v1.Warnings()...)
	}
	if !c.Bool("quiet") {
		for _, w := range st.Warnings {
			fmt.Fprintf(os.Stderr, "decrunch: %s: BMD v1: %s\n", inName, w)
		}
	}
	if st.Salvaged != nil && !c.Bool("quiet") {
		fmt.Fprintf(os.Stderr, "decrunch: %s: salvaged %d objects and %d roots before the damage: %v\n", inName, st.Objects, st.Roots, st.Salvaged)
	}
	if c.Bool("stats") {
		fmt.Fprintf(os.Stderr, "strings: %d (%d in the clear, %d recovered, %d not recovered, %d array names made of their element name)\n", st.Strings, st.Clear, st.Recovered, st.Missing, st.ArrayNames)
		from := names.RecoveredFrom()
		keys := make([]string, 0, len(from))
		for k := range from {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(os.Stderr, "  recovered from %s: %d\n", k, from[k])
		}
		if v1 != nil {
			fmt.Fprintf(os.Stderr, "candidates: %d distinct, %d Java hash collisions (same hash and length) between different candidates\n", names.Len(), names.JavaCollisions)
		} else {
			fmt.Fprintf(os.Stderr, "candidates: %d distinct, %d hash collisions between different candidates\n", names.Len(), names.Collisions)
		}
		if c.String("mapping") != "" {
			fmt.Fprintf(os.Stderr, "mapping: renamed %d class, %d field and %d method name uses", st.RenamedClasses, st.RenamedFields, st.RenamedMethods)
			if st.RenameMissed > 0 {
				fmt.Fprintf(os.Stderr, " (%d field names could not be renamed: the class definitions came inside a heap dump)", st.RenameMissed)
			}
			fmt.Fprintln(os.Stderr)
		}
		fmt.Fprintf(os.Stderr, "objects: %d, roots: %d, HPROF bytes: %d\n", st.Objects, st.Roots, st.OutBytes)
	}
	return nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
