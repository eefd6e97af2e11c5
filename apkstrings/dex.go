package apkstrings

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/heapcrunch/heapcrunch/names"
)

// maxEntrySize bounds what is held in memory at once: a whole DEX file, an
// archive entry, or a nested archive.
const maxEntrySize = 512 << 20

const (
	dexHeaderSize    = 0x70 // header_item up to dex 040
	dexHeaderSizeV41 = 0x78 // with container_size and header_offset
	dexEndian        = 0x12345678
	dexReverseEndian = 0x78563412
)

// ReadDEX emits every string of a DEX file's string table (string_ids), in
// table order, decoded from modified UTF-8 to standard UTF-8 by
// names.Normalize, as crunch decodes the names of a heap dump: a surrogate
// pair becomes one 4-byte UTF-8 sequence, C0 80 becomes NUL, and a lone
// surrogate or an invalid byte becomes U+FFFD. r holds the DEX file and size
// is its length in bytes; the file is read into memory and may be at most
// 512 MiB.
//
// DEX versions 035 and later are accepted (magic "dex\n0NN\0"); a version 041
// container holding several DEX files yields the strings of each in turn.
// ReadDEX returns the number of strings emitted. Malformed input is reported as
// a *FormatError; the strings emitted before the problem was found stay
// emitted and counted.
func ReadDEX(r io.ReaderAt, size int64, emit func(string)) (int, error) {
	if size < dexHeaderSize {
		return 0, formatErr(0, fmt.Sprintf("file of %d bytes is too short for a dex header", max(size, 0)))
	}
	if size > maxEntrySize {
		return 0, formatErr(-1, fmt.Sprintf("dex file of %d bytes is larger than the %d MiB limit", size, maxEntrySize>>20))
	}
	// Check the header before reading the rest, so that a file that is not
	// a DEX file at all costs no more than its first bytes.
	var head [dexHeaderSize]byte
	if err := readFullAt(r, head[:], 0); err != nil {
		return 0, err
	}
	if _, err := dexVersion(head[:], 0); err != nil {
		return 0, err
	}
	data := make([]byte, size)
	if err := readFullAt(r, data, 0); err != nil {
		return 0, err
	}
	return readDEX(data, emit)
}

// readFullAt fills p from r at off; a short read is a *FormatError since the
// caller promised more bytes than there are.
func readFullAt(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		return formatErr(off+int64(n), fmt.Sprintf("file ends after %d bytes; %d expected", off+int64(n), off+int64(len(p))))
	}
	return err
}

// dexVersion checks the magic of the header at h and returns the version.
func dexVersion(data []byte, h int) (int, error) {
	if len(data)-h < 8 {
		return 0, formatErr(int64(h), "truncated dex header")
	}
	m := data[h : h+8]
	if m[0] != 'd' || m[1] != 'e' || m[2] != 'x' || m[3] != '\n' || m[7] != 0 ||
		!isDigit(m[4]) || !isDigit(m[5]) || !isDigit(m[6]) {
		return 0, formatErr(int64(h), fmt.Sprintf("bad dex magic %q", m))
	}
	v := int(m[4]-'0')*100 + int(m[5]-'0')*10 + int(m[6]-'0')
	if v < 35 {
		return 0, formatErr(int64(h+4), fmt.Sprintf("unsupported dex version %03d", v))
	}
	return v, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// readDEX emits the strings of the DEX file (or v41 container) held in data.
func readDEX(data []byte, emit func(string)) (int, error) {
	st := dexState{
		// In a well-formed file string_data_items do not overlap, so
		// together they are no longer than the file. The budget (each
		// string costs its length plus one) stops a crafted file whose
		// string_ids all point at one long run of bytes, or a container
		// whose many headers all point at one table, from costing time
		// and memory quadratic in its size.
		budget: 4*len(data) + 1<<20,
	}
	total := 0
	for h := 0; ; {
		n, next, err := st.readAt(data, h, emit)
		total += n
		if err != nil {
			return total, err
		}
		if next <= h || next >= len(data) {
			return total, nil
		}
		h = next
	}
}

type dexState struct {
	budget int
	tables [][2]uint64 // string_ids tables already read (offset, size)
}

// readAt emits the strings of the DEX file whose header is at h. It returns
// the offset of the next header of a v41 container, or 0.
func (st *dexState) readAt(data []byte, h int, emit func(string)) (count, next int, err error) {
	version, err := dexVersion(data, h)
	if err != nil {
		return 0, 0, err
	}
	if len(data)-h < dexHeaderSize {
		return 0, 0, formatErr(int64(h), fmt.Sprintf("truncated dex header: %d bytes left, %d needed", len(data)-h, dexHeaderSize))
	}
	var bo binary.ByteOrder = binary.LittleEndian
	switch tag := binary.LittleEndian.Uint32(data[h+0x28:]); tag {
	case dexEndian:
	case dexReverseEndian:
		bo = binary.BigEndian
	default:
		return 0, 0, formatErr(int64(h+0x28), fmt.Sprintf("bad endian_tag 0x%08x", tag))
	}
	headerSize := uint64(bo.Uint32(data[h+0x24:]))
	if headerSize < dexHeaderSize {
		return 0, 0, formatErr(int64(h+0x24), fmt.Sprintf("bad header_size %d", headerSize))
	}
	// Section and data offsets count from the start of the file, which for
	// a v41 container is the start of the container rather than this
	// header (as in ART's DexFile::GetDataRange).
	base := uint64(0)
	if version >= 41 && headerSize >= dexHeaderSizeV41 {
		if base, next, err = containerPart(data, h, headerSize, bo); err != nil {
			return 0, 0, err
		}
	}
	n := uint64(bo.Uint32(data[h+0x38:]))
	tableOff := uint64(bo.Uint32(data[h+0x3C:]))
	if n == 0 {
		return 0, next, nil
	}
	table := base + tableOff
	if table > uint64(len(data)) || n > (uint64(len(data))-table)/4 {
		return 0, 0, formatErr(int64(h+0x38), fmt.Sprintf("string_ids_size %d at string_ids_off %d does not fit in %d bytes", n, tableOff, uint64(len(data))-base))
	}
	// DEX files of one container may share their string table; its
	// strings are emitted once.
	for _, t := range st.tables {
		if t == [2]uint64{table, n} {
			return 0, next, nil
		}
	}
	if len(st.tables) < 64 {
		st.tables = append(st.tables, [2]uint64{table, n})
	}
	count, err = st.emitTable(data, base, table, n, bo, emit)
	if err != nil {
		return count, 0, err
	}
	return count, next, nil
}

// containerPart reads the container fields of the version 041 header at
// h (of headerSize bytes): it returns the container's start, from which
// the header's offsets count, and the offset of the next DEX file's
// header in the container, or 0 if there is none.
func containerPart(data []byte, h int, headerSize uint64, bo binary.ByteOrder) (base uint64, next int, err error) {
	if len(data)-h < dexHeaderSizeV41 {
		return 0, 0, formatErr(int64(h), "truncated dex container header")
	}
	fileSize := uint64(bo.Uint32(data[h+0x20:]))
	containerSize := uint64(bo.Uint32(data[h+0x70:]))
	headerOff := uint64(bo.Uint32(data[h+0x74:]))
	if headerOff > uint64(h) {
		return 0, 0, formatErr(int64(h+0x74), fmt.Sprintf("bad header_offset %d", headerOff))
	}
	base = uint64(h) - headerOff
	if fileSize < headerSize {
		return 0, 0, formatErr(int64(h+0x20), fmt.Sprintf("bad file_size %d", fileSize))
	}
	end := min(base+containerSize, uint64(len(data)))
	if nxt := uint64(h) + fileSize; nxt+dexHeaderSize <= end {
		next = int(nxt)
	}
	return base, next, nil
}

// emitTable emits the n strings of the string_ids table at table, whose
// string_data_off values count from base, and returns how many it
// emitted: all of them, or those before the first malformed one.
func (st *dexState) emitTable(data []byte, base, table, n uint64, bo binary.ByteOrder, emit func(string)) (count int, err error) {
	for i := uint64(0); i < n; i++ {
		idOff := table + 4*i
		off := uint64(bo.Uint32(data[idOff:]))
		p := base + off
		if p >= uint64(len(data)) {
			return count, formatErr(int64(idOff), fmt.Sprintf("string_data_off %d of string %d is outside the file (%d bytes)", off, i, len(data)))
		}
		start, end, ok := dexString(data, int(p))
		if !ok {
			return count, formatErr(int64(p), fmt.Sprintf("string %d is not terminated", i))
		}
		if st.budget -= end - start + 1; st.budget < 0 {
			return count, formatErr(int64(p), fmt.Sprintf("string %d overlaps other strings too much", i))
		}
		emit(string(names.Normalize(data[start:end])))
		count++
	}
	return count, nil
}

// dexString finds the bytes of the string_data_item at p: a uleb128 length
// in UTF-16 units, then modified UTF-8 bytes up to a NUL.
func dexString(data []byte, p int) (start, end int, ok bool) {
	// Skip the uleb128 (at most 5 bytes).
	for k := 0; ; k++ {
		if p >= len(data) || k == 5 {
			return 0, 0, false
		}
		c := data[p]
		p++
		if c < 0x80 {
			break
		}
	}
	n := bytes.IndexByte(data[p:], 0)
	if n < 0 {
		return 0, 0, false
	}
	return p, p + n, true
}
