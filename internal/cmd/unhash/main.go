// Command unhash puts back, in a heapsummary report of a restored dump,
// the class names that decrunch left as placeholders (unknown$<16 hex
// digits>, also inside array names), taking the names from the report of
// the original dump, and sorts the class lines again. The two reports can
// then be compared line for line: every placeholder must stand for the
// name the original had at that place.
//
//	unhash ORIGINAL_REPORT < RESTORED_REPORT > NORMALIZED_REPORT
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/heapcrunch/heapcrunch/names"
)

var placeholder = regexp.MustCompile(`unknown\$([0-9a-f]{16})`)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: unhash ORIGINAL_REPORT < RESTORED_REPORT")
		os.Exit(2)
	}
	orig, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "unhash:", err)
		os.Exit(1)
	}
	restored, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "unhash:", err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	w.WriteString(normalize(string(orig), string(restored)))
	w.Flush()
}

// normalize replaces the placeholders of restored by the names of orig
// whose hash they carry, and sorts the "class " lines.
func normalize(orig, restored string) string {
	byHash := map[string]string{} // hex hash -> name as the report shows it
	for _, f := range strings.Fields(orig) {
		f = strings.TrimPrefix(f, "super=")
		base := strings.TrimRight(f, "[]")
		for _, spelling := range []string{base, strings.ReplaceAll(base, ".", "/")} {
			byHash[fmt.Sprintf("%016x", names.HashString(spelling))] = base
		}
	}
	lines := strings.Split(placeholder.ReplaceAllStringFunc(restored, func(p string) string {
		if n, ok := byHash[p[len("unknown$"):]]; ok {
			return n
		}
		return p
	}), "\n")
	// Class lines are one sorted block; sort it again.
	first, last := -1, -1
	for i, l := range lines {
		if strings.HasPrefix(l, "class ") {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first >= 0 {
		sort.Strings(lines[first : last+1])
	}
	return strings.Join(lines, "\n")
}
