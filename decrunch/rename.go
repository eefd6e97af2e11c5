package decrunch

// Mapping gives the original names of obfuscated classes, fields and
// methods, as a ProGuard/R8 mapping file does (apkstrings.Mapping is one).
// Class names may be dotted or slashed, and array or descriptor spellings.
type Mapping interface {
	Class(obfuscated string) (string, bool)
	Field(obfClass, obfField string) (string, bool)
	Method(obfClass, obfMethod string) (string, bool)
}

// renamer applies a Mapping. A STRING record may be shared by several
// uses (HotSpot writes one "a" for every field and class named "a"), and
// each use may map to a different original name, so a renamed use gets a
// STRING record of its own, written just before the record that uses it;
// the shared record keeps the recovered name. Those records take HPROF IDs
// of their own residue class, k<<3|6, so they meet no other ID.
type renamer struct {
	texts   map[uint64]string // BMD string ID -> name as written
	classBy map[uint64]string // class object ID (BMD) -> class name in the dump
	serials map[uint32]string // class serial -> class name in the dump
	extra   map[string]uint64 // original name -> HPROF ID of its own record
}

func newRenamer() *renamer {
	return &renamer{texts: map[uint64]string{}, classBy: map[uint64]string{},
		serials: map[uint32]string{}, extra: map[string]uint64{}}
}

// use returns the HPROF string ID for a use of BMD string sid whose original
// name is orig (ok: the mapping knows it): changed is false when the name
// stays as it is; write is true the first time a renamed name is used, when
// its STRING record must be written.
func (r *renamer) use(sid uint64, orig string, ok bool) (id uint64, write, changed bool) {
	if !ok || orig == r.texts[sid] {
		return 0, false, false
	}
	if id, seen := r.extra[orig]; seen {
		return id, false, true
	}
	id = uint64(len(r.extra)+1)<<3 | 6
	r.extra[orig] = id
	return id, true, true
}
