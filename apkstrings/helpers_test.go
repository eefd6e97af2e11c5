package apkstrings

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// corpusDir is the shared corpus of real files, beside the repository.
var corpusDir = filepath.Join("..", "..", "shared", "corpus")

// corpusFile returns the path of a corpus file, or skips the test when the
// corpus (or the file) is absent, as in a clone outside this workplace.
func corpusFile(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(corpusDir, name)
	if _, err := os.Stat(p); err != nil {
		testutil.Skip(t, "corpus file %s not available (the shared corpus lives at ../shared/corpus beside the module root): %v", name, err)
	}
	return p
}

// collect returns an emit function that appends to *out.
func collect(out *[]string) func(string) {
	return func(s string) { *out = append(*out, s) }
}

func toSet(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m
}

// asFormatError fails the test unless err is a *FormatError.
func asFormatError(t *testing.T, err error) *FormatError {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("want *FormatError, got %T: %v", err, err)
	}
	return fe
}

// dexSpec describes a DEX file for buildDEX.
type dexSpec struct {
	version   string // "035" if empty
	bigEndian bool
}

// buildDEX makes a minimal DEX file whose string table holds strs, given as
// raw modified UTF-8 bytes. Only the header fields ReadDEX looks at are set.
func buildDEX(spec dexSpec, strs ...[]byte) []byte {
	if spec.version == "" {
		spec.version = "035"
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if spec.bigEndian {
		bo = binary.BigEndian
	}
	const hdr = 0x70
	table := hdr
	data := table + 4*len(strs)
	out := make([]byte, data)
	copy(out, "dex\n"+spec.version+"\x00")
	for i, s := range strs {
		bo.PutUint32(out[table+4*i:], uint32(len(out)))
		out = binary.AppendUvarint(out, uint64(len(s))) // uleb128
		out = append(out, s...)
		out = append(out, 0)
	}
	bo.PutUint32(out[0x20:], uint32(len(out)))
	bo.PutUint32(out[0x24:], hdr)
	bo.PutUint32(out[0x28:], dexEndian)
	bo.PutUint32(out[0x38:], uint32(len(strs)))
	bo.PutUint32(out[0x3C:], uint32(table))
	return out
}

// buildDEXContainer makes a version 041 container holding one DEX file per
// list of strings. All offsets count from the start of the container.
func buildDEXContainer(parts ...[]string) []byte {
	const hdr = 0x78
	var out []byte
	var headers []int
	for _, strs := range parts {
		h := len(out)
		headers = append(headers, h)
		out = append(out, make([]byte, hdr+4*len(strs))...)
		copy(out[h:], "dex\n041\x00")
		le := binary.LittleEndian
		for i, s := range strs {
			le.PutUint32(out[h+hdr+4*i:], uint32(len(out)))
			out = binary.AppendUvarint(out, uint64(len(s)))
			out = append(out, s...)
			out = append(out, 0)
		}
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
		le.PutUint32(out[h+0x20:], uint32(len(out)-h)) // file_size of this part
		le.PutUint32(out[h+0x24:], hdr)
		le.PutUint32(out[h+0x28:], dexEndian)
		le.PutUint32(out[h+0x38:], uint32(len(strs)))
		le.PutUint32(out[h+0x3C:], uint32(h+hdr))
		le.PutUint32(out[h+0x74:], uint32(h)) // header_offset
	}
	for _, h := range headers {
		binary.LittleEndian.PutUint32(out[h+0x70:], uint32(len(out))) // container_size
	}
	return out
}

// zipEntry is one entry for buildZip.
type zipEntry struct {
	name   string
	data   []byte
	stored bool
}

// buildZip makes a zip archive in memory.
func buildZip(t testing.TB, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		method := zip.Deflate
		if e.stored {
			method = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeTemp writes data to a new file in a temporary directory.
func writeTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
