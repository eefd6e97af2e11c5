package apkstrings

import (
	"os"
	"testing"
)

// BenchmarkReadDEX reads the 32,768-class DEX file of the corpus (65,552
// strings), from the file each time.
func BenchmarkReadDEX(b *testing.B) {
	p := corpusFile(b, "dex-art-836-32768classes.dex")
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		n, err := ReadDEX(f, fi.Size(), func(string) {})
		if err != nil || n != 65552 {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkReadAPK reads the R8-minified jetnews release APK (9,949 strings).
func BenchmarkReadAPK(b *testing.B) {
	p := corpusFile(b, "apk-jetnews-release.apk")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadAPK(p, func(string) {}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadJAR reads commons-lang3 (362 classes).
func BenchmarkReadJAR(b *testing.B) {
	p := corpusFile(b, "jar-debian-commons-lang3-3.12.0.jar")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadJAR(p, func(string) {}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStrings are the strings of a real app when the corpus is there, and a
// small mix otherwise.
func benchStrings(b *testing.B) []string {
	if _, err := os.Stat(corpusDir); err == nil {
		var strs []string
		if _, err := ReadAPK(corpusFile(b, "apk-jetnews-release.apk"), collect(&strs)); err == nil {
			return strs
		}
	}
	return []string{"mDestroyed", "Lcom/a/B;", "[Ljava/lang/String;", "(ILjava/lang/String;)V", "com.a.B", "I", "hello world", "<init>"}
}

// BenchmarkSpellings spells every string of an app once per iteration; the
// per-string cost is reported as ns/string.
func BenchmarkSpellings(b *testing.B) {
	strs := benchStrings(b)
	n := 0
	sink := func(string) { n++ }
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range strs {
			Spellings(s, sink)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(strs)), "ns/string")
	b.ReportMetric(float64(n)/float64(b.N*len(strs)), "spellings/string")
}
