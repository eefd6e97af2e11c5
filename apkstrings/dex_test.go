package apkstrings

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestReadDEXHandBuilt(t *testing.T) {
	raw := [][]byte{
		[]byte(""),
		[]byte("<init>"),
		[]byte("Lcom/a/B;"),
		{0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80},
		[]byte("a\xC0\x80b"),
		[]byte("lone \xED\xA0\xBD"),
		[]byte("caf\xC3\xA9"),
	}
	want := []string{"", "<init>", "Lcom/a/B;", "\U0001F600", "a\x00b", "lone \uFFFD", "café"}
	for _, spec := range []dexSpec{{}, {version: "038"}, {version: "039"}, {version: "040"}, {bigEndian: true}} {
		dex := buildDEX(spec, raw...)
		var got []string
		n, err := ReadDEX(bytes.NewReader(dex), int64(len(dex)), collect(&got))
		if err != nil {
			t.Fatalf("%+v: %v", spec, err)
		}
		if n != len(want) || !slices.Equal(got, want) {
			t.Errorf("%+v: got %d %q, want %q", spec, n, got, want)
		}
	}
}

func TestReadDEXEmptyTable(t *testing.T) {
	dex := buildDEX(dexSpec{})
	n, err := ReadDEX(bytes.NewReader(dex), int64(len(dex)), func(string) { t.Error("emit called") })
	if n != 0 || err != nil {
		t.Fatalf("got %d, %v", n, err)
	}
}

func TestReadDEXContainer(t *testing.T) {
	dex := buildDEXContainer([]string{"a", "Lb;"}, []string{"c", "d", "e"})
	var got []string
	n, err := ReadDEX(bytes.NewReader(dex), int64(len(dex)), collect(&got))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "Lb;", "c", "d", "e"}; n != 5 || !slices.Equal(got, want) {
		t.Fatalf("got %d %q, want %q", n, got, want)
	}
}

// DEX files of a container that share one string table yield its strings
// once; many headers pointing at overlapping tables stop at the budget.
func TestReadDEXContainerSharedTable(t *testing.T) {
	one := buildDEXContainer([]string{"a", "b"})
	first := slices.Clone(one[:0x78])
	var dex []byte
	for range 3 {
		dex = append(dex, first...)
	}
	dex = append(dex, one[0x78:]...)
	// Point every header at the table after them; each part is one header.
	for h := 0; h < 3*0x78; h += 0x78 {
		binary.LittleEndian.PutUint32(dex[h+0x20:], 0x78)
		binary.LittleEndian.PutUint32(dex[h+0x3C:], 3*0x78)
		binary.LittleEndian.PutUint32(dex[h+0x70:], uint32(len(dex)))
		binary.LittleEndian.PutUint32(dex[h+0x74:], uint32(h))
	}
	for i := range 2 {
		p := binary.LittleEndian.Uint32(dex[3*0x78+4*i:])
		binary.LittleEndian.PutUint32(dex[3*0x78+4*i:], p+2*0x78)
	}
	var got []string
	n, err := ReadDEX(bytes.NewReader(dex), int64(len(dex)), collect(&got))
	if err != nil || n != 2 || !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("got %d %q, %v", n, got, err)
	}

	// 40,000 headers whose tables overlap, each one entry further on.
	const k = 40000
	big := make([]byte, k*0x78+4*k+8)
	strAt := len(big) - 8
	copy(big[strAt:], "\x01x\x00")
	for i := range k {
		h := i * 0x78
		copy(big[h:], "dex\n041\x00")
		le := binary.LittleEndian
		le.PutUint32(big[h+0x20:], 0x78)
		le.PutUint32(big[h+0x24:], 0x78)
		le.PutUint32(big[h+0x28:], dexEndian)
		le.PutUint32(big[h+0x38:], k-uint32(i))
		le.PutUint32(big[h+0x3C:], uint32(k*0x78+4*i))
		le.PutUint32(big[h+0x70:], uint32(len(big)))
		le.PutUint32(big[h+0x74:], uint32(h))
		le.PutUint32(big[k*0x78+4*i:], uint32(strAt))
	}
	count := 0
	_, err = ReadDEX(bytes.NewReader(big), int64(len(big)), func(string) { count++ })
	fe := asFormatError(t, err)
	if !strings.Contains(fe.Msg, "overlaps") || count > 4*len(big)+1<<20 {
		t.Fatalf("count %d, err %v", count, err)
	}
}

func TestReadDEXMalformed(t *testing.T) {
	good := buildDEX(dexSpec{}, []byte("alpha"), []byte("beta"))
	le := binary.LittleEndian
	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	tests := []struct {
		name    string
		data    []byte
		wantMsg string
		wantN   int
	}{
		{"empty", nil, "too short", 0},
		{"truncated header", good[:0x50], "too short", 0},
		{"truncated strings", good[:len(good)-3], "not terminated", 1},
		{"bad magic", mod(func(b []byte) []byte { copy(b, "dey\n036\x00"); return b }), "bad dex magic", 0},
		{"not a dex", []byte(strings.Repeat("hello world\n", 20)), "bad dex magic", 0},
		{"old version", mod(func(b []byte) []byte { copy(b[4:], "013"); return b }), "unsupported dex version", 0},
		{"bad endian", mod(func(b []byte) []byte { le.PutUint32(b[0x28:], 1); return b }), "endian_tag", 0},
		{"bad header size", mod(func(b []byte) []byte { le.PutUint32(b[0x24:], 8); return b }), "header_size", 0},
		{"huge string count", mod(func(b []byte) []byte { le.PutUint32(b[0x38:], 0xFFFFFFFF); return b }), "string_ids_size", 0},
		{"table past end", mod(func(b []byte) []byte { le.PutUint32(b[0x3C:], 0xFFFFFFF0); return b }), "string_ids_size", 0},
		{"string offset out of range", mod(func(b []byte) []byte { le.PutUint32(b[0x74:], 0x7FFFFFFF); return b }), "outside the file", 1},
		{"unterminated string", mod(func(b []byte) []byte { return b[:len(b)-1] }), "not terminated", 1},
		{"uleb runs off", mod(func(b []byte) []byte {
			le.PutUint32(b[0x74:], uint32(len(b)-1))
			b[len(b)-1] = 0x80
			return b
		}), "not terminated", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			n, err := ReadDEX(bytes.NewReader(tt.data), int64(len(tt.data)), collect(&got))
			fe := asFormatError(t, err)
			if !strings.Contains(fe.Error(), tt.wantMsg) {
				t.Errorf("error %q does not mention %q", fe, tt.wantMsg)
			}
			if n != tt.wantN || len(got) != n {
				t.Errorf("emitted %d (%q), returned %d; want %d", len(got), got, n, tt.wantN)
			}
			t.Log(fe)
		})
	}
}

// A crafted file whose string_ids all point into one long run of bytes must
// not cost time quadratic in its size.
func TestReadDEXOverlappingStrings(t *testing.T) {
	const n = 1 << 16
	dex := buildDEX(dexSpec{}, bytes.Repeat([]byte("x"), 8<<20))
	table := make([]byte, 4*n)
	base := binary.LittleEndian.Uint32(dex[0x70:])
	for i := range n {
		binary.LittleEndian.PutUint32(table[4*i:], base+uint32(i))
	}
	// Put the new table at the end and point the header at it.
	binary.LittleEndian.PutUint32(dex[0x38:], n)
	binary.LittleEndian.PutUint32(dex[0x3C:], uint32(len(dex)))
	dex = append(dex, table...)
	count := 0
	_, err := ReadDEX(bytes.NewReader(dex), int64(len(dex)), func(string) { count++ })
	fe := asFormatError(t, err)
	if !strings.Contains(fe.Msg, "overlaps") || count > 10 {
		t.Fatalf("count %d, err %v", count, err)
	}
}

// TestReadDEXSizeLimit: a DEX file over maxEntrySize is refused for its
// size, before anything is read or allocated (the reader here is empty).
func TestReadDEXSizeLimit(t *testing.T) {
	_, err := ReadDEX(bytes.NewReader(nil), maxEntrySize+1, func(string) {})
	fe := asFormatError(t, err)
	if want := fmt.Sprintf("dex file of %d bytes is larger than the 512 MiB limit", maxEntrySize+1); fe.Msg != want {
		t.Errorf("error %q, want %q", fe.Msg, want)
	}
}

func TestFormatErrorText(t *testing.T) {
	e := &FormatError{Path: "app.apk", Entry: "classes2.dex", Offset: 56, Msg: "bad string_ids offset 123"}
	if got, want := e.Error(), "apkstrings: app.apk: classes2.dex: bad string_ids offset 123 at offset 56"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	e = &FormatError{Offset: -1, Msg: "x"}
	if got, want := e.Error(), "apkstrings: x"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
