package apkstrings

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// genMapping returns a mapping.txt of n classes in R8's shape, each with
// 10 fields and 20 methods with line ranges, two of them inlined frames
// (the shape of the generated 52 MB mapping the README measures, at
// n = 30,000): "com.example.pkgI.SomeLongClassNameI -> a.b.cI".
func genMapping(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "com.example.pkg%d.SomeLongClassName%d -> a.b.c%d:\n", i%97, i, i)
		fmt.Fprintf(&b, "# {\"id\":\"sourceFile\",\"fileName\":\"SomeLongClassName%d.kt\"}\n", i)
		for f := range 10 {
			fmt.Fprintf(&b, "    java.lang.String someFieldWithALongName%d -> f%d\n", f, f)
		}
		for m := range 20 {
			fmt.Fprintf(&b, "    %d:%d:void someMethodWithALongName%d(int,java.lang.String):%d:%d -> m%d\n", m*10+1, m*10+9, m, m*7+1, m*7+9, m)
			if m%10 == 0 {
				fmt.Fprintf(&b, "    %d:%d:void someMethodWithALongName%d(int,java.lang.String):%d:%d -> m%d\n", m*10+1, m*10+9, m, m*7+1, m*7+9, m)
			}
		}
	}
	return b.Bytes()
}

// BenchmarkParseMapping parses a generated mapping of 30,000 classes
// (genMapping, 52 MB) kept whole.
func BenchmarkParseMapping(b *testing.B) {
	data := genMapping(30000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		m, err := ParseMapping(bytes.NewReader(data))
		if err != nil || m.Classes() != 30000 {
			b.Fatal(m.Classes(), err)
		}
	}
}

// BenchmarkParseMappingOf parses the same mapping keeping one class in
// ten, as for a dump that holds a tenth of the app's classes.
func BenchmarkParseMappingOf(b *testing.B) {
	data := genMapping(30000)
	keep := func(obf string) bool { return strings.HasSuffix(obf, "0") }
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		m, err := ParseMappingOf(bytes.NewReader(data), keep)
		if err != nil || m.Classes() != 3000 {
			b.Fatal(m.Classes(), err)
		}
	}
}
