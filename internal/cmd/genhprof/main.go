// Command genhprof writes a synthetic, well-formed HPROF 1.0.2 heap dump of
// a chosen size, and reads one back to count what it holds. It exists to
// test crunch and decrunch on dumps over 4 GiB (scripts/over4g.sh), which no
// JVM on a small machine makes quickly.
//
//	genhprof -o FILE -size BYTES [-idsize 4|8] [-segsize BYTES] [-maxarray BYTES] [-hugearray BYTES] [-seed N] [-counts FILE]
//	genhprof -verify FILE
//
// The dump has STRING and LOAD CLASS records for java/lang/Object, a
// String-like java/lang/String (value: byte[], hash, coder), java/lang/Thread,
// com/example/heap/Node (next, data: objects; id, count, flag: primitives)
// and the array classes [B, [I and [Ljava/lang/Object;, a stack frame and
// traces, and HEAP DUMP SEGMENTs closed by a HEAP DUMP END holding the
// CLASS DUMPs, GC roots of every HotSpot kind and then blocks of objects
// until the size is reached: each block is a big byte[] or int[] (1 to 16
// MiB, contents from a seeded generator) and a few thousand small objects
// (String and its byte[], a Node chained to the previous one and pointing at
// the String, a small int[] or the block's big array, Object[] over recent
// objects). Object IDs are heap-address-like (above 4 GiB with -idsize 8)
// and ascending; every reference points at an object already written. The
// output is the same for the same flags.
//
// The generator prints what it wrote as "key: value" lines on stderr (or in
// the -counts file); -verify reads a dump with the repository's hprof.Reader
// and prints the same lines for what it finds. Counts of objects by kind,
// array elements, references, roots by kind and fingerprints of the object
// graph (IDs taken as ranks, which is how crunch numbers objects) must be
// equal between a generated dump, its -verify and the -verify of its
// crunch + decrunch round trip; lines starting with "file." describe the
// file's layout and may differ.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	out := flag.String("o", "", "write the generated dump to `FILE` (- for standard output)")
	size := flag.String("size", "64MiB", "target size in `BYTES` (suffixes K, M, G, KiB, MiB, GiB accepted)")
	idSize := flag.Int("idsize", 8, "identifier size, 4 or 8")
	segSize := flag.String("segsize", "32MiB", "largest HEAP DUMP SEGMENT body in `BYTES`")
	maxArray := flag.String("maxarray", "16MiB", "largest big primitive array in `BYTES` (they range from 1/16 of it)")
	hugeArray := flag.String("hugearray", "0", "also write one zero-filled long[] of about `BYTES` (under 4 GiB) in a record of its own")
	seed := flag.Uint64("seed", 1, "seed of the generated contents")
	countsFile := flag.String("counts", "", "write the counts to `FILE` (generating: instead of stderr; -verify: as well as stdout)")
	verifyFile := flag.String("verify", "", "read the HPROF `FILE` and print its counts instead of generating")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: genhprof -o FILE -size BYTES [-idsize 4|8]\n       genhprof -verify FILE\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	t0 := time.Now()
	if *verifyFile != "" {
		c, err := verify(*verifyFile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "genhprof: verify %s: %v\n", *verifyFile, err)
			os.Exit(1)
		}
		if err := writeCounts(c, os.Stdout, ""); err != nil {
			fmt.Fprintf(os.Stderr, "genhprof: %v\n", err)
			os.Exit(1)
		}
		if err := writeCounts(c, nil, *countsFile); err != nil {
			fmt.Fprintf(os.Stderr, "genhprof: %v\n", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "genhprof: verified %s (%d bytes) in %.1f s\n", *verifyFile, c.file.bytes, time.Since(t0).Seconds())
		return
	}
	if *out == "" {
		fmt.Fprintln(os.Stderr, "genhprof: -o FILE is required")
		os.Exit(2)
	}
	sizes := map[string]*string{"size": size, "segsize": segSize, "maxarray": maxArray, "hugearray": hugeArray}
	n := map[string]int64{}
	for name, s := range sizes {
		v, err := parseSize(*s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "genhprof: -%s: %v\n", name, err)
			os.Exit(2)
		}
		n[name] = v
	}
	opt := genOptions{Size: n["size"], IDSize: *idSize, SegmentSize: int(n["segsize"]), Seed: *seed,
		MaxArray: int(n["maxarray"]), HugeArray: n["hugearray"]}
	if err := run(*out, opt, *countsFile); err != nil {
		fmt.Fprintf(os.Stderr, "genhprof: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "genhprof: wrote %s in %.1f s\n", *out, time.Since(t0).Seconds())
}

func run(path string, opt genOptions, countsFile string) error {
	var w io.Writer = os.Stdout
	var f *os.File
	if path != "-" {
		var err error
		if f, err = os.Create(path); err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	c, err := generate(w, opt)
	if err != nil {
		return err
	}
	if f != nil {
		if err := f.Close(); err != nil {
			return err
		}
	}
	if countsFile == "" {
		return writeCounts(c, os.Stderr, "")
	}
	return writeCounts(c, nil, countsFile)
}

// writeCounts writes the counts to w, or when w is nil to the named file
// (when there is a name).
func writeCounts(c *counts, w io.Writer, file string) error {
	if w != nil {
		return c.write(w)
	}
	if file == "" {
		return nil
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := c.write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// parseSize reads a byte count with an optional K, M, G (powers of 1000)
// or KiB, MiB, GiB (powers of 1024) suffix; the number may have a fraction.
func parseSize(s string) (int64, error) {
	mult := 1.0
	for _, u := range []struct {
		suf string
		m   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}} {
		if strings.HasSuffix(s, u.suf) {
			s, mult = strings.TrimSuffix(s, u.suf), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return int64(v * mult), nil
}
