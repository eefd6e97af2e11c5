package bmd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"
	"google.golang.org/protobuf/encoding/protowire"
)

// The records of a version 2 file follow the header in checksummed blocks
// (spec/bmd.md §3.1):
//
//	block = varint payload length | payload | u64le xxhash64(length varint ‖ payload)
//
// Records run on from one block to the next; a block's checksum is checked
// before any of its bytes is handed to the record decoder, so a reader
// never decodes damaged bytes, and a truncated or damaged file keeps
// exactly the records of its sound blocks.
const (
	// BlockSize is the payload size of the blocks the Writer writes (the
	// last one may be shorter).
	BlockSize = 16 << 10
	// MaxBlockSize is the largest payload a Reader accepts: what it must
	// hold in memory to check a block.
	MaxBlockSize = 1 << 20
)

// ErrChecksum is wrapped by the error for a block or header whose checksum
// does not match its bytes.
var ErrChecksum = errors.New("bmd: checksum mismatch")

// appendBlock appends one block holding payload to b.
func appendBlock(b, payload []byte) []byte {
	start := len(b)
	b = protowire.AppendVarint(b, uint64(len(payload)))
	b = append(b, payload...)
	return binary.LittleEndian.AppendUint64(b, xxhash.Sum64(b[start:]))
}

// blockReader reads the blocks of a file and returns their checked
// payloads as one stream. It remembers where the payload of each block it
// has read lies in the file, for as long as the decoder may ask.
type blockReader struct {
	src     io.Reader
	base    int64 // file offset of the first block
	fileOff int64 // file offset of the next block
	payload int64 // stream offset of the next block's payload
	buf     []byte
	cur     []byte // unread payload of the current block
	err     error
	spans   []blockSpan // blocks whose payload the decoder may still be reading
	blocks  int64
}

// blockSpan places a block's payload: stream offsets [stream, stream+n)
// are file offsets [file, file+n).
type blockSpan struct {
	stream, file, n int64
}

func newBlockReader(src io.Reader, fileOff int64) *blockReader {
	return &blockReader{src: src, base: fileOff, fileOff: fileOff}
}

// Read returns checked payload bytes. At the end of the file it returns
// io.EOF; a block cut short, an implausible length or a checksum that does
// not match gives a *FormatError (with the block's offset), and the bytes
// of earlier blocks stay readable.
func (b *blockReader) Read(p []byte) (int, error) {
	for len(b.cur) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		b.err = b.next()
	}
	n := copy(p, b.cur)
	b.cur = b.cur[n:]
	return n, nil
}

// next reads and checks the next block.
func (b *blockReader) next() error {
	at := b.fileOff
	var lb [binary.MaxVarintLen64]byte
	k := 0
	for ; k < len(lb); k++ {
		if _, err := io.ReadFull(b.src, lb[k:k+1]); err != nil {
			if err == io.EOF && k == 0 {
				return io.EOF
			}
			return b.truncated(at, err)
		}
		if lb[k] < 0x80 {
			k++
			break
		}
	}
	n, m := protowire.ConsumeVarint(lb[:k])
	if m < 0 || n == 0 || n > MaxBlockSize {
		return &FormatError{Offset: at, Record: "block", Msg: fmt.Sprintf("block length %d (a block holds 1 to %d bytes)", n, MaxBlockSize)}
	}
	if cap(b.buf) < k+int(n)+8 {
		b.buf = make([]byte, 0, max(k+int(n)+8, BlockSize+16))
	}
	buf := append(b.buf[:0], lb[:k]...)
	buf = buf[:k+int(n)+8]
	if _, err := io.ReadFull(b.src, buf[k:]); err != nil {
		return b.truncated(at, err)
	}
	sum := binary.LittleEndian.Uint64(buf[k+int(n):])
	if xxhash.Sum64(buf[:k+int(n)]) != sum {
		return &FormatError{Offset: at, Record: "block", Msg: fmt.Sprintf("block %d (bytes %d to %d): checksum mismatch: the file is damaged", b.blocks+1, at, at+int64(len(buf))), Err: ErrChecksum}
	}
	b.buf = buf
	b.cur = buf[k : k+int(n)]
	b.spans = append(b.spans, blockSpan{b.payload, at + int64(k), int64(n)})
	b.payload += int64(n)
	b.fileOff += int64(len(buf))
	b.blocks++
	return nil
}

func (b *blockReader) truncated(at int64, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &FormatError{Offset: at, Record: "block", Msg: fmt.Sprintf("truncated: block %d is cut short", b.blocks+1), Err: io.ErrUnexpectedEOF}
	}
	return &blockReadError{fmt.Sprintf("bmd: reading block %d at offset %d", b.blocks+1, at), err}
}

// span returns the block whose payload holds stream offset s, if it is
// still known (fileOffset forgets the blocks before the offsets asked).
func (b *blockReader) span(s int64) (blockSpan, bool) {
	for _, sp := range b.spans {
		if sp.stream <= s && s < sp.stream+sp.n {
			return sp, true
		}
	}
	return blockSpan{}, false
}

// blockReadError is a failure of the underlying reader while reading a
// block: it says which block and at what file offset.
type blockReadError struct {
	where string
	err   error
}

func (e *blockReadError) Error() string { return e.where + ": " + e.err.Error() }
func (e *blockReadError) Unwrap() error { return e.err }

// fileOffset returns the file offset of stream offset s, and forgets the
// blocks wholly before s: the decoder asks in increasing order. Past the
// last block read it extrapolates from the next block's place.
func (b *blockReader) fileOffset(s int64) int64 {
	for len(b.spans) > 1 && b.spans[0].stream+b.spans[0].n <= s {
		b.spans = b.spans[1:]
	}
	if len(b.spans) > 0 {
		sp := b.spans[0]
		if s < sp.stream+sp.n {
			return sp.file + s - sp.stream
		}
	}
	return b.fileOff + s - b.payload
}
