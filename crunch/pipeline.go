package crunch

import (
	"sync"

	"github.com/heapcrunch/heapcrunch/bmd"
)

// recordWriter is the part of *bmd.Writer that pass 2 uses. Pass 2 writes
// either to the bmd.Writer itself or to a recorder, which hands the records
// to another goroutine that encodes them: one core reads the dump and maps
// IDs (the costly part), the other encodes BMD.
type recordWriter interface {
	String(text []byte) (uint64, error)
	HashedString(length uint64, hash uint64) (uint64, error)
	LoadClass(serial uint32, class uint64, trace uint32, name uint64) error
	UnloadClass(serial uint32) error
	StackFrame(method, signature, source uint64, classSerial uint32, line int32) (uint64, error)
	StackTrace(serial, thread uint32, frames []uint64) error
	StartThread(serial uint32, object uint64, trace uint32, name, group, parent uint64) error
	EndThread(serial uint32) error
	RawRecord(tag uint8, body []byte) error
	Time(t uint32) error
	HeapDump(segment bool) error
	HeapDumpEnd() error
	Trace(serial uint32) error
	Class(c *bmd.Class) (uint64, error)
	Instance(class uint64, values []uint64) (uint64, error)
	ObjectArray(class uint64, elems []uint64) (uint64, error)
	PrimitiveArray(t bmd.Type, length uint32, noData bool) (uint64, error)
	Root(kind uint8, object uint64, thread, frame uint32, jniRef uint64, trace uint32) error
	HeapInfo(heapType uint32, name uint64) error
	PlaceClasses(n uint64) error
}

type opCode uint8

const (
	opString opCode = iota
	opHashed
	opLoadClass
	opUnloadClass
	opStackFrame
	opStackTrace
	opStartThread
	opEndThread
	opRaw
	opTime
	opHeapDump
	opHeapDumpEnd
	opTrace
	opClass
	opInstance
	opObjectArray
	opPrimitiveArray
	opRoot
	opHeapInfo
	opPlace
)

// op is one recorded call. Slices are kept as offsets into the batch's
// arenas, which grow while the batch fills.
type op struct {
	code       opCode
	a, b, c, d uint64
	x, y, z    uint32
	off, n     int // values in batch.u64, or bytes in batch.raw
}

type batch struct {
	ops     []op
	u64     []uint64
	raw     []byte
	classes []*bmd.Class
}

const (
	batchOps = 1 << 12
	batchU64 = 1 << 15
)

// recorder is a recordWriter that records calls in batches and sends them
// to a goroutine that replays them on a *bmd.Writer. The IDs it returns are
// not meaningful (pass 2 does not use them). Errors of the replaying side
// are returned by the calls that follow them.
type recorder struct {
	cur  *batch
	out  chan *batch
	free chan *batch
	done chan struct{}

	mu       sync.Mutex
	err      error // the replaying side's error
	finished bool
}

func newRecorder(w *bmd.Writer) *recorder {
	r := &recorder{out: make(chan *batch, 4), free: make(chan *batch, 6), done: make(chan struct{})}
	for range 6 {
		r.free <- &batch{}
	}
	r.cur = <-r.free
	go r.replay(w)
	return r
}

func (r *recorder) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *recorder) add(o op) error {
	b := r.cur
	b.ops = append(b.ops, o)
	if len(b.ops) >= batchOps || len(b.u64) >= batchU64 || len(b.raw) >= batchU64*8 {
		r.out <- b
		r.cur = <-r.free
		r.cur.ops, r.cur.u64, r.cur.raw, r.cur.classes = r.cur.ops[:0], r.cur.u64[:0], r.cur.raw[:0], r.cur.classes[:0]
		return r.failed()
	}
	return nil
}

func (r *recorder) vals(v []uint64) (int, int) {
	off := len(r.cur.u64)
	r.cur.u64 = append(r.cur.u64, v...)
	return off, len(v)
}

func (r *recorder) bytes(v []byte) (int, int) {
	off := len(r.cur.raw)
	r.cur.raw = append(r.cur.raw, v...)
	return off, len(v)
}

// finish sends what is left, waits for the replay to end and returns its
// error.
// finish may be called more than once.
func (r *recorder) finish() error {
	if !r.finished {
		r.finished = true
		r.out <- r.cur
		close(r.out)
		<-r.done
	}
	return r.failed()
}

func (r *recorder) replay(w *bmd.Writer) {
	defer close(r.done)
	for b := range r.out {
		if r.failed() == nil {
			if err := replayBatch(w, b); err != nil {
				r.mu.Lock()
				r.err = err
				r.mu.Unlock()
			}
		}
		r.free <- b
	}
}

func replayBatch(w *bmd.Writer, b *batch) error {
	var err error
	for _, o := range b.ops {
		switch o.code {
		case opString:
			_, err = w.String(b.raw[o.off : o.off+o.n])
		case opHashed:
			_, err = w.HashedString(o.a, o.b)
		case opLoadClass:
			err = w.LoadClass(o.x, o.a, o.y, o.b)
		case opUnloadClass:
			err = w.UnloadClass(o.x)
		case opStackFrame:
			_, err = w.StackFrame(o.a, o.b, o.c, o.x, int32(o.y))
		case opStackTrace:
			err = w.StackTrace(o.x, o.y, b.u64[o.off:o.off+o.n])
		case opStartThread:
			err = w.StartThread(o.x, o.a, o.y, o.b, o.c, o.d)
		case opEndThread:
			err = w.EndThread(o.x)
		case opRaw:
			err = w.RawRecord(uint8(o.x), b.raw[o.off:o.off+o.n])
		case opTime:
			err = w.Time(o.x)
		case opHeapDump:
			err = w.HeapDump(o.x != 0)
		case opHeapDumpEnd:
			err = w.HeapDumpEnd()
		case opTrace:
			err = w.Trace(o.x)
		case opClass:
			_, err = w.Class(b.classes[o.off])
		case opInstance:
			_, err = w.Instance(o.a, b.u64[o.off:o.off+o.n])
		case opObjectArray:
			_, err = w.ObjectArray(o.a, b.u64[o.off:o.off+o.n])
		case opPrimitiveArray:
			_, err = w.PrimitiveArray(bmd.Type(o.x), o.y, o.z != 0)
		case opRoot:
			err = w.Root(uint8(o.x), o.a, o.y, o.z, o.b, uint32(o.c))
		case opHeapInfo:
			err = w.HeapInfo(o.x, o.a)
		case opPlace:
			err = w.PlaceClasses(o.a)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *recorder) String(text []byte) (uint64, error) {
	off, n := r.bytes(text)
	return 0, r.add(op{code: opString, off: off, n: n})
}

func (r *recorder) HashedString(length uint64, hash uint64) (uint64, error) {
	return 0, r.add(op{code: opHashed, a: length, b: hash})
}

func (r *recorder) LoadClass(serial uint32, class uint64, trace uint32, name uint64) error {
	return r.add(op{code: opLoadClass, x: serial, a: class, y: trace, b: name})
}

func (r *recorder) UnloadClass(serial uint32) error {
	return r.add(op{code: opUnloadClass, x: serial})
}

func (r *recorder) StackFrame(method, signature, source uint64, classSerial uint32, line int32) (uint64, error) {
	return 0, r.add(op{code: opStackFrame, a: method, b: signature, c: source, x: classSerial, y: uint32(line)})
}

func (r *recorder) StackTrace(serial, thread uint32, frames []uint64) error {
	off, n := r.vals(frames)
	return r.add(op{code: opStackTrace, x: serial, y: thread, off: off, n: n})
}

func (r *recorder) StartThread(serial uint32, object uint64, trace uint32, name, group, parent uint64) error {
	return r.add(op{code: opStartThread, x: serial, a: object, y: trace, b: name, c: group, d: parent})
}

func (r *recorder) EndThread(serial uint32) error {
	return r.add(op{code: opEndThread, x: serial})
}

func (r *recorder) RawRecord(tag uint8, body []byte) error {
	off, n := r.bytes(body)
	return r.add(op{code: opRaw, x: uint32(tag), off: off, n: n})
}

func (r *recorder) Time(t uint32) error { return r.add(op{code: opTime, x: t}) }

func (r *recorder) HeapDump(segment bool) error {
	var s uint32
	if segment {
		s = 1
	}
	return r.add(op{code: opHeapDump, x: s})
}

func (r *recorder) HeapDumpEnd() error { return r.add(op{code: opHeapDumpEnd}) }

func (r *recorder) Trace(serial uint32) error { return r.add(op{code: opTrace, x: serial}) }

func (r *recorder) Class(c *bmd.Class) (uint64, error) {
	cc := *c
	cc.Constants = append([]bmd.Constant(nil), c.Constants...)
	cc.Statics = append([]bmd.Static(nil), c.Statics...)
	cc.Fields = append([]bmd.Field(nil), c.Fields...)
	r.cur.classes = append(r.cur.classes, &cc)
	return 0, r.add(op{code: opClass, off: len(r.cur.classes) - 1})
}

func (r *recorder) Instance(class uint64, values []uint64) (uint64, error) {
	off, n := r.vals(values)
	return 0, r.add(op{code: opInstance, a: class, off: off, n: n})
}

func (r *recorder) ObjectArray(class uint64, elems []uint64) (uint64, error) {
	off, n := r.vals(elems)
	return 0, r.add(op{code: opObjectArray, a: class, off: off, n: n})
}

func (r *recorder) PrimitiveArray(t bmd.Type, length uint32, noData bool) (uint64, error) {
	var z uint32
	if noData {
		z = 1
	}
	return 0, r.add(op{code: opPrimitiveArray, x: uint32(t), y: length, z: z})
}

func (r *recorder) Root(kind uint8, object uint64, thread, frame uint32, jniRef uint64, trace uint32) error {
	return r.add(op{code: opRoot, x: uint32(kind), a: object, y: thread, z: frame, b: jniRef, c: uint64(trace)})
}

func (r *recorder) HeapInfo(heapType uint32, name uint64) error {
	return r.add(op{code: opHeapInfo, x: heapType, a: name})
}

func (r *recorder) PlaceClasses(n uint64) error { return r.add(op{code: opPlace, a: n}) }
