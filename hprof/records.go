package hprof

import (
	"encoding/binary"
	"fmt"
)

// LoadClass is the body of a LOAD CLASS record.
type LoadClass struct {
	Serial     uint32
	ClassID    uint64
	StackTrace uint32
	Name       uint64 // string ID
}

// StackFrame is the body of a STACK FRAME record.
type StackFrame struct {
	ID         uint64
	Method     uint64 // string ID of the method name
	Signature  uint64 // string ID
	SourceFile uint64 // string ID
	Class      uint32 // class serial
	Line       int32  // > 0 line, -1 unknown, -2 compiled, -3 native
}

// StackTrace is the body of a STACK TRACE record.
type StackTrace struct {
	Serial uint32
	Thread uint32
	Frames []uint64 // frame IDs
}

// StartThread is the body of a START THREAD record.
type StartThread struct {
	Serial      uint32
	Object      uint64
	StackTrace  uint32
	Name        uint64 // string IDs
	Group       uint64
	ParentGroup uint64
}

// BodyDecoder decodes top-level record bodies of a file with a given
// identifier size. Its methods return a *FormatError naming the record when a
// body is too short.
type BodyDecoder struct {
	IDSize int
}

func (d BodyDecoder) id(b []byte) uint64 {
	if d.IDSize == 4 {
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

func short(rec Record, need, have int) error {
	return &FormatError{Offset: rec.Offset, Record: rec.Tag.String(), Tag: int(rec.Tag),
		Msg: fmt.Sprintf("body of %d bytes is too short (needs %d)", have, need)}
}

// ParseString splits a STRING body into its ID and text.
func (d BodyDecoder) ParseString(rec Record, b []byte) (uint64, []byte, error) {
	if len(b) < d.IDSize {
		return 0, nil, short(rec, d.IDSize, len(b))
	}
	return d.id(b), b[d.IDSize:], nil
}

// ParseLoadClass decodes a LOAD CLASS body.
func (d BodyDecoder) ParseLoadClass(rec Record, b []byte) (LoadClass, error) {
	n := 8 + 2*d.IDSize
	if len(b) < n {
		return LoadClass{}, short(rec, n, len(b))
	}
	i := d.IDSize
	return LoadClass{Serial: binary.BigEndian.Uint32(b), ClassID: d.id(b[4:]),
		StackTrace: binary.BigEndian.Uint32(b[4+i:]), Name: d.id(b[8+i:])}, nil
}

// ParseStackFrame decodes a STACK FRAME body.
func (d BodyDecoder) ParseStackFrame(rec Record, b []byte) (StackFrame, error) {
	i := d.IDSize
	n := 4*i + 8
	if len(b) < n {
		return StackFrame{}, short(rec, n, len(b))
	}
	return StackFrame{ID: d.id(b), Method: d.id(b[i:]), Signature: d.id(b[2*i:]), SourceFile: d.id(b[3*i:]),
		Class: binary.BigEndian.Uint32(b[4*i:]), Line: int32(binary.BigEndian.Uint32(b[4*i+4:]))}, nil
}

// ParseStackTrace decodes a STACK TRACE body; frames are appended to buf.
func (d BodyDecoder) ParseStackTrace(rec Record, b []byte, buf []uint64) (StackTrace, error) {
	if len(b) < 12 {
		return StackTrace{}, short(rec, 12, len(b))
	}
	t := StackTrace{Serial: binary.BigEndian.Uint32(b), Thread: binary.BigEndian.Uint32(b[4:])}
	n := int64(binary.BigEndian.Uint32(b[8:]))
	if need := 12 + n*int64(d.IDSize); int64(len(b)) < need {
		return StackTrace{}, short(rec, int(need), len(b))
	}
	t.Frames = buf[:0]
	for k := 0; k < int(n); k++ {
		t.Frames = append(t.Frames, d.id(b[12+k*d.IDSize:]))
	}
	return t, nil
}

// ParseStartThread decodes a START THREAD body.
func (d BodyDecoder) ParseStartThread(rec Record, b []byte) (StartThread, error) {
	i := d.IDSize
	n := 8 + 4*i
	if len(b) < n {
		return StartThread{}, short(rec, n, len(b))
	}
	return StartThread{Serial: binary.BigEndian.Uint32(b), Object: d.id(b[4:]), StackTrace: binary.BigEndian.Uint32(b[4+i:]),
		Name: d.id(b[8+i:]), Group: d.id(b[8+2*i:]), ParentGroup: d.id(b[8+3*i:])}, nil
}

// ParseSerial decodes the single u4 of an UNLOAD CLASS or END THREAD body.
func (d BodyDecoder) ParseSerial(rec Record, b []byte) (uint32, error) {
	if len(b) < 4 {
		return 0, short(rec, 4, len(b))
	}
	return binary.BigEndian.Uint32(b), nil
}

// BodyEncoder appends top-level record bodies for a given identifier size.
type BodyEncoder struct {
	IDSize int
}

// AppendID appends id in the encoder's identifier width.
func (e BodyEncoder) AppendID(b []byte, id uint64) []byte {
	if e.IDSize == 4 {
		return binary.BigEndian.AppendUint32(b, uint32(id))
	}
	return binary.BigEndian.AppendUint64(b, id)
}

// AppendString appends a STRING body.
func (e BodyEncoder) AppendString(b []byte, id uint64, text []byte) []byte {
	return append(e.AppendID(b, id), text...)
}

// AppendLoadClass appends a LOAD CLASS body.
func (e BodyEncoder) AppendLoadClass(b []byte, l LoadClass) []byte {
	b = binary.BigEndian.AppendUint32(b, l.Serial)
	b = e.AppendID(b, l.ClassID)
	b = binary.BigEndian.AppendUint32(b, l.StackTrace)
	return e.AppendID(b, l.Name)
}

// AppendStackFrame appends a STACK FRAME body.
func (e BodyEncoder) AppendStackFrame(b []byte, f StackFrame) []byte {
	b = e.AppendID(b, f.ID)
	b = e.AppendID(b, f.Method)
	b = e.AppendID(b, f.Signature)
	b = e.AppendID(b, f.SourceFile)
	b = binary.BigEndian.AppendUint32(b, f.Class)
	return binary.BigEndian.AppendUint32(b, uint32(f.Line))
}

// AppendStackTrace appends a STACK TRACE body.
func (e BodyEncoder) AppendStackTrace(b []byte, t StackTrace) []byte {
	b = binary.BigEndian.AppendUint32(b, t.Serial)
	b = binary.BigEndian.AppendUint32(b, t.Thread)
	b = binary.BigEndian.AppendUint32(b, uint32(len(t.Frames)))
	for _, f := range t.Frames {
		b = e.AppendID(b, f)
	}
	return b
}

// AppendStartThread appends a START THREAD body.
func (e BodyEncoder) AppendStartThread(b []byte, t StartThread) []byte {
	b = binary.BigEndian.AppendUint32(b, t.Serial)
	b = e.AppendID(b, t.Object)
	b = binary.BigEndian.AppendUint32(b, t.StackTrace)
	b = e.AppendID(b, t.Name)
	b = e.AppendID(b, t.Group)
	return e.AppendID(b, t.ParentGroup)
}

// AppendSerial appends the u4 body of UNLOAD CLASS or END THREAD.
func (e BodyEncoder) AppendSerial(b []byte, serial uint32) []byte {
	return binary.BigEndian.AppendUint32(b, serial)
}
