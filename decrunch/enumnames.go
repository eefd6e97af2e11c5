package decrunch

import (
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// Enum constants' names.
//
// A BMD file holds no String contents, so the Strings of a restored dump
// have no text, the names of enum constants among them, which analyzers
// read: LeakCanary's Shark takes an androidx Fragment for destroyed, a
// leak to look for, when the name of its lifecycle state is "DESTROYED"
// (AndroidObjectInspectors.ANDROIDX_FRAGMENT, v2.14), and a Compose
// Recomposer for shut down by its state's name. Those names are in the
// file all the same: javac and kotlinc make each enum constant the value
// of a static field of its enum class named as the constant, and the file
// keeps static field names (in the clear, or hashed and recovered from the
// app's files, or renamed by its mapping). So decrunch writes the text of
// each constant's name (java.lang.Enum.name) back from the name of the
// static field that holds it, where the String's array has the length of
// that name: a String whose array has another length (a name the build
// renamed and no mapping gave back) keeps its zeros. Nothing of this comes
// from the heap's contents: the texts are field names the file holds.
//
// The same way, decrunch writes back the name of an Android app's main
// thread, "main": Shark ignores the locals of the thread of that name
// (AndroidReferenceMatchers.MAIN) and labels it as never leaking
// (AndroidObjectInspectors.MAIN_THREAD). Android names its main thread
// "main", and the file shows which thread it is: the one of
// android.os.Looper.sMainLooper (Looper.mThread). Its name String gets the
// text where its array has 4 elements.
//
// And the texts of android.os.Build.MANUFACTURER and Build.ID, where the
// file's labels give them (Build.MANUFACTURER=..., Build.ID=...: what the
// app passes crunch on the device, README "On the device"): Shark applies
// some of its known-library-leak matchers on one manufacturer's devices
// only, or on one build (AndroidReferenceMatchers, read through
// AndroidBuildMirror), and prints the manufacturer in its metadata. Each
// String gets its label's text where its array has the text's length; a
// label of another length (another device's) writes nothing. The app's
// process name the same way, from the label ApplicationInfo.processName:
// Shark prints it in its metadata, read from
// ActivityThread.sCurrentActivityThread.mBoundApplication.appInfo.processName
// (AndroidMetadataExtractor), a path of objects followed as the main
// thread's is.
//
// The first pass follows each constant to its name String and the String
// to its array as it reads on (bmd.Reader.DecodeRun and ValuesOf: the
// runs of objects that hold one are decoded, the values of those objects
// alone), and what lies behind what names it, one reading of the file
// more for each step back (a String made before its constant, as the
// interned names of a JDK's archived heap are). The writing pass then puts
// the text in each array, which it decides from the array's length as it
// writes it, and, for an Android String (which has a count field, a
// primitive value the file dropped), the String's count.

// enumNames is what the first pass and the readings after it learn of the
// classes and of the constants, and the fixes the writing pass makes.
type enumNames struct {
	classes map[uint64]*enumClass // class object ID -> its definition (first CLASS record)
	named   map[string]uint64     // the classes looked for by name -> class object ID (LOAD CLASS)
	sdk     int64                 // android.os.Build$VERSION.SDK_INT where the file kept it, else -1

	consts   map[uint64][]constStatic // constant -> the statics that hold it
	hops     map[uint64]hop           // object on the way to a String whose text decrunch writes (hopSteps) -> what it is
	kinds    map[uint64]textKind      // name String -> what names it, where not a constant
	build    map[string]string        // android.os.Build's static -> its text, from the labels (the file's, then Options.Labels)
	process  string                   // the app's process name, from the labels, or ""
	strNames map[uint64][]string      // name String -> its constants' names (or its one text: the main thread's, a label's)
	arrayOf  map[uint64]uint64        // name String -> its array
	found    map[uint64]bmd.Record    // array -> its type and length (the reading's, or as written)

	// The reading: the IDs it still looks for ahead, least first (a heap:
	// a file's statics come in any order, and a sorted slice took a copy
	// for each), and those it found behind, for the next reading.
	r    *bmd.Reader
	want idHeap
	next []uint64

	fixes     []enumFix // sorted by ID
	fixAt     int       // the first fix not passed by the writing pass
	nextFix   uint64    // its ID (math.MaxUint64 past the last)
	hasOffset bool      // java.lang.String has an offset field
}

// The classes enumNames looks for, in their spellings of LOAD CLASS
// records (HotSpot 9 on writes slashes).
var enumClassNames = map[string]string{
	"java.lang.Enum": "java.lang.Enum", "java/lang/Enum": "java.lang.Enum",
	"java.lang.String": "java.lang.String", "java/lang/String": "java.lang.String",
	"android.os.Build$VERSION": "android.os.Build$VERSION", "android/os/Build$VERSION": "android.os.Build$VERSION",
	"android.os.Looper": "android.os.Looper", "android/os/Looper": "android.os.Looper",
	"java.lang.Thread": "java.lang.Thread", "java/lang/Thread": "java.lang.Thread",
	"android.os.Build": "android.os.Build", "android/os/Build": "android.os.Build",
	"android.app.ActivityThread": "android.app.ActivityThread", "android/app/ActivityThread": "android.app.ActivityThread",
	"android.app.ActivityThread$AppBindData": "android.app.ActivityThread$AppBindData",
	"android/app/ActivityThread$AppBindData": "android.app.ActivityThread$AppBindData",
	"android.content.pm.ApplicationInfo":     "android.content.pm.ApplicationInfo",
	"android/content/pm/ApplicationInfo":     "android.content.pm.ApplicationInfo",
}

// textKind is what a String's text written back is, for Stats.
type textKind uint8

const (
	enumText    textKind = iota // an enum constant's name (Stats.EnumNames)
	threadText                  // the main thread's name (Stats.ThreadNames)
	buildText                   // a text of android.os.Build from the labels (Stats.BuildTexts)
	processText                 // the app's process name from the labels (Stats.ProcessNames)
)

// BuildLabels are the labels whose values decrunch writes into the
// Strings of android.os.Build's statics of the same names, and the
// statics: a BMD holds no String contents, and Shark reads these two.
var BuildLabels = map[string]string{"Build.MANUFACTURER": "MANUFACTURER", "Build.ID": "ID"}

// ProcessNameLabel is the label whose value decrunch writes into the
// String of the app's process name, android.content.pm.ApplicationInfo's
// processName of ActivityThread.sCurrentActivityThread.mBoundApplication.appInfo,
// which Shark prints in its metadata.
const ProcessNameLabel = "ApplicationInfo.processName"

// TextLabel reports whether decrunch writes the value of a label of key
// into a String of the heap: the BuildLabels and ProcessNameLabel.
func TextLabel(key string) bool {
	return BuildLabels[key] != "" || key == ProcessNameLabel
}

// buildTexts returns the texts of android.os.Build's statics that labels
// give (the last of each key), by the statics' names.
func buildTexts(labels []string) map[string]string {
	t := map[string]string{}
	for label, static := range BuildLabels {
		if v := labelText(labels, label); v != "" {
			t[static] = v
		}
	}
	return t
}

// labelText returns the value of the last of labels of key, or "".
func labelText(labels []string, key string) string {
	m := bmd.Metadata{Labels: labels}
	v, _ := m.Label(key)
	return v
}

// hop is what an object on the way to a String whose text decrunch
// writes is: the main thread's name, the app's process name.
type hop uint8

const (
	hopLooper         hop = iota // the main Looper, whose mThread is the main thread
	hopThread                    // the main thread, whose name is its name String
	hopActivityThread            // ActivityThread.sCurrentActivityThread, whose mBoundApplication is its AppBindData
	hopBindData                  // the AppBindData, whose appInfo is the app's ApplicationInfo
	hopAppInfo                   // the ApplicationInfo, whose processName is the process name String
)

// hopSteps says, for each hop, which field of the object to follow (the
// field of that name declared by that class), and where it leads: the
// next hop, or, for the last (last true), the String whose text it is.
var hopSteps = [...]struct {
	class, field string
	next         hop
	last         bool
}{
	hopLooper:         {"android.os.Looper", "mThread", hopThread, false},
	hopThread:         {"java.lang.Thread", "name", 0, true},
	hopActivityThread: {"android.app.ActivityThread", "mBoundApplication", hopBindData, false},
	hopBindData:       {"android.app.ActivityThread$AppBindData", "appInfo", hopAppInfo, false},
	hopAppInfo:        {"android.content.pm.ApplicationInfo", "processName", 0, true},
}

// mainThreadName is the name Android gives an app's main thread.
const mainThreadName = "main"

// enumClass is what enumNames keeps of a class definition.
type enumClass struct {
	super  uint64
	fields []bmd.Field // its own instance fields
}

// constStatic is a static field of an enum class (owner) that refers to
// an object, by its name as the dump is written.
type constStatic struct {
	owner uint64
	name  string
}

// enumFix is what the writing pass changes in object id: an array's text
// (array set), one of names, or a String's count (at offset off of its
// instance data), that of the array arr. Which name, if any, is decided
// as the array is written, from its length; a String written before its
// array takes the array's type and length from the reading that found it.
type enumFix struct {
	id    uint64
	array bool
	names []string
	arr   uint64
	off   int
	kind  textKind
}

// newEnumNames returns the enumNames of a first pass by r, of a file
// whose labels (with Options.Labels) are labels.
func newEnumNames(r *bmd.Reader, labels []string) *enumNames {
	return &enumNames{classes: map[uint64]*enumClass{}, named: map[string]uint64{}, sdk: -1, build: buildTexts(labels), process: labelText(labels, ProcessNameLabel),
		consts: map[uint64][]constStatic{}, hops: map[uint64]hop{}, kinds: map[uint64]textKind{}, strNames: map[uint64][]string{}, arrayOf: map[uint64]uint64{}, found: map[uint64]bmd.Record{}, r: r}
}

// start readies r, the first pass's reader or a reading's, to decode the
// runs and values of the objects looked for.
func (e *enumNames) start(r *bmd.Reader) {
	e.r, e.want, e.next = r, idHeap(e.next), nil
	heap.Init(&e.want)
	// before has left the IDs behind the run: its first is ahead.
	r.DecodeRun = func(first, count uint64) bool { return len(e.want) > 0 && e.want[0]-first < count }
	e.setValuesOf()
}

// setValuesOf tells the reader the next object looked for.
func (e *enumNames) setValuesOf() {
	e.r.ValuesOf = 0
	if len(e.want) > 0 {
		e.r.ValuesOf = e.want[0]
	}
}

// before readies the reader for its next record: the IDs looked for that
// it has passed without an object record (a class's, or an ID no object
// has) are left, so that the values it decodes are the next object's
// looked for.
func (e *enumNames) before() {
	if len(e.want) > 0 && e.want[0] < e.r.NextID() { // inlined: a test per record
		e.pass()
	}
}

// pass leaves the IDs looked for that the reader has passed.
func (e *enumNames) pass() {
	for len(e.want) > 0 && e.want[0] < e.r.NextID() {
		heap.Pop(&e.want)
	}
	e.setValuesOf()
}

// loadClass notes the name of a class (a LOAD CLASS record of the first
// pass), if it is one looked for.
func (e *enumNames) loadClass(rec *bmd.Record, texts []string) {
	if rec.Name < uint64(len(texts)) {
		if n, ok := enumClassNames[texts[rec.Name]]; ok {
			if _, dup := e.named[n]; !dup {
				e.named[n] = rec.Class
			}
		}
	}
}

// class notes a class definition (a CLASS record of the first pass), with
// the names of its statics as the dump is written (staticName), and looks
// for the objects the statics of an enum class (a direct subclass of
// java.lang.Enum) refer to: its constants.
func (e *enumNames) class(rec *bmd.Record, staticName func(i int) string) {
	d := &rec.Def
	if _, seen := e.classes[rec.ID]; seen || d.Redump {
		return
	}
	e.classes[rec.ID] = &enumClass{super: d.Super, fields: slices.Clone(d.Fields)}
	enum, isEnum := e.named["java.lang.Enum"]
	isEnum = isEnum && d.Super == enum
	for i, f := range d.Statics {
		switch {
		case isEnum && f.Type == bmd.Object && f.Value != 0:
			e.consts[f.Value] = append(e.consts[f.Value], constStatic{rec.ID, staticName(i)})
			e.follow(f.Value)
		case f.Type == bmd.Int && f.Kept && e.named["android.os.Build$VERSION"] == rec.ID && staticName(i) == "SDK_INT":
			e.sdk = int64(int32(f.Value))
		case f.Type == bmd.Object && f.Value != 0 && e.named["android.os.Looper"] == rec.ID && staticName(i) == "sMainLooper":
			e.hopTo(f.Value, hopLooper)
		case f.Type == bmd.Object && f.Value != 0 && e.process != "" && e.named["android.app.ActivityThread"] == rec.ID &&
			staticName(i) == "sCurrentActivityThread":
			e.hopTo(f.Value, hopActivityThread)
		case f.Type == bmd.Object && f.Value != 0 && e.named["android.os.Build"] == rec.ID:
			if text := e.build[staticName(i)]; text != "" {
				e.nameString(f.Value, text, buildText)
			}
		}
	}
}

// follow looks for object id: ahead in this reading, or in the next if
// the reading has passed it.
func (e *enumNames) follow(id uint64) {
	if id < e.r.NextID() {
		e.next = append(e.next, id)
		return
	}
	heap.Push(&e.want, id)
	e.setValuesOf()
}

// object takes object record rec, if it is one looked for: a constant
// gives its name String, a String its array, an array its type and
// length.
func (e *enumNames) object(rec *bmd.Record, texts []string) {
	if len(e.want) > 0 && e.want[0] == rec.ID { // inlined: a test per object (before passed the others)
		e.take(rec, texts)
	}
}

// take takes object record rec, looked for.
func (e *enumNames) take(rec *bmd.Record, texts []string) {
	for len(e.want) > 0 && e.want[0] == rec.ID {
		heap.Pop(&e.want)
	}
	e.setValuesOf()
	if h, ok := e.hops[rec.ID]; ok && rec.Kind == bmd.KindInstance {
		e.hop(rec, h, texts)
		return
	}
	switch {
	case rec.Kind == bmd.KindPrimitiveArray && (rec.Type == bmd.Char || rec.Type == bmd.Byte):
		e.found[rec.ID] = bmd.Record{Type: rec.Type, Count: rec.Count}
	case rec.Kind != bmd.KindInstance:
	case len(e.strNames[rec.ID]) > 0:
		if i, ok := e.stringValue(texts); ok && rec.Class == e.named["java.lang.String"] && i < len(rec.Values) && rec.Values[i] != 0 {
			a := rec.Values[i]
			e.arrayOf[rec.ID] = a
			// An array behind its String is written first: the writing
			// pass decides its text as it writes it (arrayText).
			if a >= e.r.NextID() {
				e.follow(a)
			}
		}
	default:
		e.constant(rec, texts)
	}
}

// constant takes a constant's instance: the names of the statics that
// hold it, where it is an instance of their class or of a subclass of it,
// go to its name String, which is looked for.
func (e *enumNames) constant(rec *bmd.Record, texts []string) {
	i, _, ok := e.field(texts, rec.Class, e.named["java.lang.Enum"], "name")
	if !ok || i >= len(rec.Values) || rec.Values[i] == 0 {
		return
	}
	str := rec.Values[i]
	n := len(e.strNames[str])
	for _, c := range e.consts[rec.ID] {
		if e.below(rec.Class, c.owner) {
			e.strNames[str] = append(e.strNames[str], c.name)
		}
	}
	if n == 0 && len(e.strNames[str]) > 0 {
		e.follow(str)
	}
}

// hop takes an instance on the way to a String whose text decrunch
// writes (hopSteps): the field it names gives the next object on the way,
// which is looked for, or the String, which is looked for as a constant's
// name is: the main thread's name "main", the process name of the labels.
func (e *enumNames) hop(rec *bmd.Record, h hop, texts []string) {
	step := hopSteps[h]
	i, t, ok := e.field(texts, rec.Class, e.named[step.class], step.field)
	if !ok || t != bmd.Object || i >= len(rec.Values) || rec.Values[i] == 0 {
		return
	}
	v := rec.Values[i]
	_, named := e.kinds[v] // a String is one text's
	switch {
	case !step.last:
		e.hopTo(v, step.next)
	case named:
	case h == hopThread:
		e.nameString(v, mainThreadName, threadText)
	default:
		e.nameString(v, e.process, processText)
	}
}

// hopTo notes that object id is hop h on the way to a String, and looks
// for it, unless it is one already.
func (e *enumNames) hopTo(id uint64, h hop) {
	if _, seen := e.hops[id]; !seen {
		e.hops[id] = h
		e.follow(id)
	}
}

// nameString notes that String str gets text, a name of that kind (not a
// constant's), and looks for the String, unless an earlier name did.
func (e *enumNames) nameString(str uint64, text string, kind textKind) {
	e.kinds[str] = kind
	e.strNames[str] = append(e.strNames[str], text)
	if len(e.strNames[str]) == 1 {
		e.follow(str)
	}
}

// stringValue returns the index of java.lang.String's value field among
// a String's values.
func (e *enumNames) stringValue(texts []string) (int, bool) {
	str := e.named["java.lang.String"]
	i, t, ok := e.field(texts, str, str, "value")
	return i, ok && t == bmd.Object
}

// maxEnumDepth bounds the classes field and below walk up from a class:
// a file could chain a million classes below an enum and name a constant
// of the last with each of a million statics. Real hierarchies are a few
// dozen classes deep.
const maxEnumDepth = 256

// field returns the index of the instance field called name among the
// values of an instance of class k (its own fields first, then its super
// classes'), declared by class decl, and its type; ok false if decl is
// not k or above it, or declares no such field.
func (e *enumNames) field(texts []string, k, decl uint64, name string) (i int, t bmd.Type, ok bool) {
	for n := 0; n < maxEnumDepth; n++ {
		c := e.classes[k]
		if c == nil {
			break
		}
		if k == decl {
			for j, f := range c.fields {
				if f.Name < uint64(len(texts)) && texts[f.Name] == name {
					return i + j, f.Type, true
				}
			}
			break
		}
		i += len(c.fields)
		k = c.super
	}
	return 0, 0, false
}

// below reports whether class k is class top or one of its subclasses.
func (e *enumNames) below(k, top uint64) bool {
	for n := 0; n < maxEnumDepth && e.classes[k] != nil; n++ {
		if k == top {
			return true
		}
		k = e.classes[k].super
	}
	return false
}

// findEnumNames follows what the first pass left behind, one reading of
// the file for each step back: a String made before its constant, and a
// constant met before the class whose static holds it (which the file
// defines before the constant's own class's instances, so only another
// enum class's static, an alias); an array is never looked for behind
// (arrayText). Then it makes the fixes. It gives up on a read error, which
// the writing pass meets and reports in its turn.
func (c *converter) findEnumNames() {
	e := c.enums
	for round := 0; round < maxEnumReadings && len(e.next) > 0; round++ {
		if err := c.readEnums(); err != nil {
			return
		}
	}
	e.makeFixes(c)
}

// maxEnumReadings bounds the readings of findEnumNames: a constant
// behind its static, then its String behind it, take two; the process
// name's AppBindData behind the ActivityThread, its ApplicationInfo behind
// it and its String behind that, three.
const maxEnumReadings = 3

// readEnums reads the file from its start for the objects the reading
// before passed (enumNames.next).
func (c *converter) readEnums() error {
	src, err := c.open()
	if err != nil {
		return err
	}
	r, ok := src.(*bmd.Reader)
	if !ok {
		return errNotV2
	}
	r.SkipValues, r.SkipObjects, r.MaxElements = true, true, 1
	c.enums.start(r)
	for {
		c.enums.before()
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if isObject(rec.Kind) {
			c.enums.object(rec, c.texts)
		}
	}
}

// errNotV2 stops readEnums on a file that is not of version 2.
var errNotV2 = errors.New("not a BMD version 2 file")

// makeFixes makes the fixes of each name String and its array: the
// writing pass decides each array's text from its length (arrayText), and
// the String's count, where String has an int count field (Android), from
// its array's (stringCount).
func (e *enumNames) makeFixes(c *converter) {
	str := e.named["java.lang.String"]
	countAt, ct, hasCount := e.field(c.texts, str, str, "count")
	_, _, e.hasOffset = e.field(c.texts, str, str, "offset")
	hasCount = hasCount && ct == bmd.Int
	countOff := 0
	if hasCount {
		for _, f := range e.classes[str].fields[:countAt] {
			countOff += hprof.BasicType(f.Type).Size(c.meta.IDSize)
		}
	}
	for s, a := range e.arrayOf {
		e.fixes = append(e.fixes, enumFix{id: a, array: true, names: e.strNames[s], kind: e.kinds[s]})
		if hasCount {
			e.fixes = append(e.fixes, enumFix{id: s, names: e.strNames[s], arr: a, off: countOff})
		}
	}
	slices.SortFunc(e.fixes, func(a, b enumFix) int { return cmp.Compare(a.id, b.id) })
	e.due(0)
}

// arrayText returns the elements of the array of fix f, of length
// elements of elem, big-endian as HPROF writes them: the one of its names
// that fits; nil if none does. It notes the array's type and length for
// the Strings written after it (putCount).
func (e *enumNames) arrayText(f *enumFix, length uint32, elem hprof.BasicType) []byte {
	e.found[f.id] = bmd.Record{Type: bmd.Type(elem), Count: length}
	text, ok := fitting(f.names, int(length))
	if !ok || elem != hprof.Char && elem != hprof.Byte {
		return nil
	}
	if elem == hprof.Byte {
		return []byte(text)
	}
	b := make([]byte, 0, 2*len(text))
	for i := 0; i < len(text); i++ {
		b = append(b, 0, text[i])
	}
	return b
}

// putCount puts the count of the String of fix f in its instance data,
// if its array has, or will have, one of its names (arrayText): written
// before it, or found ahead of it by the reading.
func (e *enumNames) putCount(f *enumFix, data []byte) {
	arr, ok := e.found[f.arr]
	if !ok || f.off+4 > len(data) {
		return
	}
	if _, fits := fitting(f.names, int(arr.Count)); fits && (arr.Type == bmd.Char || arr.Type == bmd.Byte) {
		binary.BigEndian.PutUint32(data[f.off:], stringCount(int(arr.Count), hprof.BasicType(arr.Type), e.hasOffset, e.sdk))
	}
}

// fitting returns the one name of names (without repeats) that is ASCII and
// as long as an array of n chars or bytes; ok false if none or several
// are.
func fitting(names []string, n int) (name string, ok bool) {
	for _, s := range names {
		if len(s) != n || !ascii(s) || s == name {
			continue
		}
		if ok {
			return "", false
		}
		name, ok = s, true
	}
	return name, ok
}

// ascii reports whether s is all ASCII: its length is then the length of
// its array in every String layout (Latin-1 bytes, ART's compressed
// bytes, UTF-16 chars).
func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// stringCount returns the count field of an Android String of n ASCII
// chars in an array of elem: n where String has an offset field (Dalvik,
// and ART up to Android 5.1) or the array is of chars before Android 8
// (API 26); from API 26 ART keeps n<<1 with the low bit 0 for a
// compressed String (bytes) and 1 for one of chars (mirror::String's
// GetFlaggedCount).
func stringCount(n int, elem hprof.BasicType, hasOffset bool, sdk int64) uint32 {
	switch {
	case hasOffset:
		return uint32(n)
	case elem == hprof.Byte:
		return uint32(n) << 1
	case sdk >= 26:
		return uint32(n)<<1 | 1
	}
	return uint32(n)
}

// due returns the fix of object id, the next the writing pass writes, or
// nil. The writing pass writes objects in the order of their IDs, and
// calls it only from the ID of the next fix on (e.nextFix): a test
// inlined in its loops, where a call for every object cost decrunch of
// the 134 MB dump's BMD 3.1 million calls.
func (e *enumNames) due(id uint64) *enumFix {
	for e.fixAt < len(e.fixes) && e.fixes[e.fixAt].id < id {
		e.fixAt++
	}
	e.nextFix = math.MaxUint64
	if e.fixAt < len(e.fixes) {
		e.nextFix = e.fixes[e.fixAt].id
		if e.nextFix == id {
			return &e.fixes[e.fixAt]
		}
	}
	return nil
}

// idHeap is a min-heap of object IDs (container/heap).
type idHeap []uint64

func (h idHeap) Len() int           { return len(h) }
func (h idHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h idHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *idHeap) Push(x any)        { *h = append(*h, x.(uint64)) }
func (h *idHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
