package compress

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"
)

func compressed(t testing.TB, k Kind, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := NewWriter(&b, k)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bzip2 has no writer in the standard library: "hello\n" made by bzip2 -9.
var bzip2Hello = []byte("\x42\x5a\x68\x39\x31\x41\x59\x26\x53\x59\xc1\xc0\x80\xe2\x00\x00\x01\x41\x00\x00\x10\x02\x44\xa0\x00\x30\xcd\x00\xc3\x46\x29\x97\x17\x72\x45\x38\x50\x90\xc1\xc0\x80\xe2")

// TestDetectByContent: the compression is found from the bytes, whatever the
// file is called, and undone.
func TestDetectByContent(t *testing.T) {
	plain := []byte("JAVA PROFILE 1.0.2\x00 and the rest of a heap dump")
	cases := []struct {
		kind Kind
		data []byte
		want []byte
	}{
		{None, plain, plain},
		{Gzip, compressed(t, Gzip, plain), plain},
		{Zstd, compressed(t, Zstd, plain), plain},
		{Bzip2, bzip2Hello, []byte("hello\n")},
		{None, []byte{}, []byte{}},
		{None, []byte{0x1f}, []byte{0x1f}},     // too short to be gzip
		{None, []byte("BZh0"), []byte("BZh0")}, // not a bzip2 block size
	}
	for _, c := range cases {
		if got := Detect(c.data); got != c.kind {
			t.Errorf("Detect(%q) = %s, want %s", c.data[:min(len(c.data), 8)], got, c.kind)
		}
		r, k, err := NewReader(bytes.NewReader(c.data))
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || k != c.kind || !bytes.Equal(got, c.want) {
			t.Errorf("%s: read %q, kind %s, err %v", c.kind, got, k, err)
		}
	}
}

// TestSniff: Sniff knows xz too, which Detect (what NewReader undoes)
// leaves as None; both read the one table of magic numbers.
func TestSniff(t *testing.T) {
	for _, c := range []struct {
		head          string
		sniff, detect Kind
	}{
		{"\x1f\x8b\x08", Gzip, Gzip},
		{"\x28\xb5\x2f\xfd\x04", Zstd, Zstd},
		{"BZh91AY&SY", Bzip2, Bzip2},
		{"BZh0", None, None},
		{"BZh", None, None},
		{"\xfd7zXZ\x00\x00", Xz, None},
		{"\xfd7zX", None, None},
		{"JAVA PROFILE 1.0.2\x00", None, None},
		{"", None, None},
	} {
		if got := Sniff([]byte(c.head)); got != c.sniff {
			t.Errorf("Sniff(%q) = %s, want %s", c.head, got, c.sniff)
		}
		if got := Detect([]byte(c.head)); got != c.detect {
			t.Errorf("Detect(%q) = %s, want %s", c.head, got, c.detect)
		}
	}
}

// TestFixtureIsGzip: the shipped sample is found to be gzip by content.
func TestFixtureIsGzip(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "sample.hprof.gz"))
	if err != nil {
		t.Fatal(err) // the fixture is part of the repository
	}
	defer f.Close()
	r, k, err := NewReader(f)
	if err != nil || k != Gzip {
		t.Fatalf("kind %s, err %v", k, err)
	}
	defer r.Close()
	head := make([]byte, 18)
	if _, err := io.ReadFull(r, head); err != nil || string(head) != "JAVA PROFILE 1.0.2" {
		t.Fatalf("decompressed head %q, %v", head, err)
	}
}

// TestTruncatedAndCorrupt: a cut or damaged compressed stream is an error,
// never a silent short read.
func TestTruncatedAndCorrupt(t *testing.T) {
	data := bytes.Repeat([]byte("heap dump bytes 0123456789 "), 4000)
	for _, k := range []Kind{Gzip, Zstd} {
		c := compressed(t, k, data)
		bad := append([]byte{}, c...)
		bad[len(bad)/2] ^= 0xFF
		for name, in := range map[string][]byte{"cut": c[:len(c)/2], "header only": c[:4], "corrupt": bad} {
			r, _, err := NewReader(bytes.NewReader(in))
			if err == nil {
				var got []byte
				got, err = io.ReadAll(r)
				r.Close()
				if err == nil && bytes.Equal(got, data) {
					t.Errorf("%s %s: read back the whole data", k, name)
					continue
				}
			}
			if err == nil {
				t.Errorf("%s %s: no error", k, name)
			}
		}
	}
	// A gzip file cut in its header says so, and where it ends.
	c := compressed(t, Gzip, data)
	for _, n := range []int{2, 5, 9} {
		_, _, err := NewReader(bytes.NewReader(c[:n]))
		if want := fmt.Sprintf("truncated: the file ends in its gzip header, at offset %d", n); err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("gzip cut to %d bytes: %v, want %q", n, err, want)
		}
	}
}

func TestForNameAndParse(t *testing.T) {
	for name, want := range map[string]Kind{"a.bmd": None, "a.bmd.zst": Zstd, "a.zstd": Zstd, "a.bmd.gz": Gzip, "-": None, "zst": None} {
		if got := ForName(name); got != want {
			t.Errorf("ForName(%q) = %s, want %s", name, got, want)
		}
	}
	for s, want := range map[string]Kind{"none": None, "zstd": Zstd, "zst": Zstd, "gzip": Gzip, "gz": Gzip, "ZSTD": Zstd, "Gzip": Gzip, "NONE": None} {
		if got, err := Parse(s); err != nil || got != want {
			t.Errorf("Parse(%q) = %s, %v", s, got, err)
		}
	}
	for _, s := range []string{"xz", "", " zstd"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q): no error", s)
		}
	}
	if _, err := NewWriter(io.Discard, Bzip2); err == nil {
		t.Error("NewWriter(bzip2): no error")
	}
}

// totalAlloc returns the bytes allocated so far by the process (cheaper
// than runtime.ReadMemStats, which stops the world).
func totalAlloc() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// FuzzNewReader: any input is detected and read without panic, with
// memory bounded whatever its headers claim, and the kind found is the one
// Detect gives for its first bytes.
func FuzzNewReader(f *testing.F) {
	plain := []byte("JAVA PROFILE 1.0.2\x00\x00\x00\x00\x04")
	f.Add(plain)
	f.Add(compressed(f, Gzip, plain))
	f.Add(append(compressed(f, Gzip, plain), compressed(f, Gzip, plain)...))
	f.Add(append(compressed(f, Gzip, plain), "junk"...))
	f.Add(compressed(f, Zstd, plain))
	f.Add(compressed(f, Zstd, bytes.Repeat(plain, 100)))
	f.Add(bzip2Hello)
	f.Add([]byte{0x1f, 0x8b})
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd})
	f.Fuzz(func(t *testing.T, data []byte) {
		before := totalAlloc()
		r, k, err := NewReader(bytes.NewReader(data))
		if k != Detect(data[:min(len(data), 4)]) {
			t.Fatalf("NewReader found %s, Detect says %s", k, Detect(data))
		}
		if err != nil {
			return
		}
		// A few MB at most: decompression bombs are the decoder's
		// business, here only panics and memory matter.
		var got bytes.Buffer
		n, err := io.Copy(&got, io.LimitReader(r, 64<<20))
		r.Close()
		if k == None && (err != nil || n != int64(len(data))) {
			t.Fatalf("plain input: %d of %d bytes, %v", n, len(data), err)
		}
		// Member by member, gzip reads what the standard library's
		// multistream reader reads, and fails where it fails (naming
		// trailing data as such).
		if k == Gzip {
			zr, zerr := gzip.NewReader(bytes.NewReader(data))
			if zerr != nil {
				t.Fatalf("NewReader took a gzip stream that gzip.NewReader refuses: %v", zerr)
			}
			var want bytes.Buffer
			_, werr := io.Copy(&want, io.LimitReader(zr, 64<<20))
			if !bytes.Equal(got.Bytes(), want.Bytes()) || (err == nil) != (werr == nil) {
				t.Fatalf("gzip: read %d bytes, error %v; gzip.Reader %d bytes, error %v", got.Len(), err, want.Len(), werr)
			}
		}
		if got := totalAlloc() - before; got > 256<<20 {
			t.Fatalf("%s input of %d bytes allocated %d bytes", k, len(data), got)
		}
	})
}

// TestZstdWindowLimit: a zstd frame that declares a 256 MiB window (9
// bytes, found by FuzzNewReader: the decoder allocated the whole window)
// is refused; one of 8 MiB, what crunch writes, is read.
func TestZstdWindowLimit(t *testing.T) {
	for _, c := range []struct {
		window byte
		ok     bool
	}{{0x90, false}, {0x68, true}} {
		in := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, c.window, 0x01, 0x00, 0x00} // an empty last raw block
		before := totalAlloc()
		r, _, err := NewReader(bytes.NewReader(in))
		if err == nil {
			_, err = io.Copy(io.Discard, r)
			r.Close()
		}
		if got := totalAlloc() - before; got > 32<<20 {
			t.Errorf("window byte %#x: allocated %d bytes", c.window, got)
		}
		if (err == nil) != c.ok {
			t.Errorf("window byte %#x: err %v", c.window, err)
		}
	}
}

// TestGzipMembers: members one after the other read as one stream; bytes
// after the last member that are not gzip are ErrTrailingData, which says
// how many, where a member cut short is still an unexpected EOF.
func TestGzipMembers(t *testing.T) {
	member := func(s string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(s))
		zw.Close()
		return b.Bytes()
	}
	one, two := member("JAVA PROFILE 1.0.2\x00first"), member(" and second")
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for name, c := range map[string]struct {
		in   []byte
		want string // the content read before the error
		err  string // "" for none
	}{
		"one member":        {one, "JAVA PROFILE 1.0.2\x00first", ""},
		"two members":       {cat(one, two), "JAVA PROFILE 1.0.2\x00first and second", ""},
		"garbage":           {cat(one, []byte("not gzip!")), "JAVA PROFILE 1.0.2\x00first", "trailing data after the end of the gzip data: 9 bytes that are not gzip, after 24 decompressed bytes"},
		"zero padding":      {cat(one, two, make([]byte, 512)), "JAVA PROFILE 1.0.2\x00first and second", ": 512 bytes that are not gzip, after 35 decompressed bytes"},
		"one byte":          {cat(one, []byte{0x1f}), "JAVA PROFILE 1.0.2\x00first", ": 1 byte that is not gzip, after 24 decompressed bytes"},
		"second member cut": {cat(one, two[:len(two)-5]), "", "unexpected EOF"},
		"second header cut": {cat(one, two[:6]), "", "unexpected EOF"},
	} {
		r, k, err := NewReader(bytes.NewReader(c.in))
		if err != nil || k != Gzip {
			t.Fatalf("%s: %v, %s", name, err, k)
		}
		got, err := io.ReadAll(r)
		r.Close()
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one saying %q", name, err, c.err)
		case strings.HasPrefix(c.err, "trailing") || strings.HasPrefix(c.err, ":"):
			if !errors.Is(err, ErrTrailingData) {
				t.Errorf("%s: %v is not ErrTrailingData", name, err)
			}
		case strings.Contains(c.err, "unexpected EOF") && errors.Is(err, ErrTrailingData):
			t.Errorf("%s: a cut member reported as trailing data: %v", name, err)
		}
		if c.want != "" && string(got) != c.want {
			t.Errorf("%s: read %q, want %q", name, got, c.want)
		}
	}
}
