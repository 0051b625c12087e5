package cell

import (
	"slices"
	"strings"
	"sync"

	"github.com/cellserver/cellserver/cell/script"
)

// functionSet is the server's loaded function libraries (FUNCTION LOAD):
// libraries by name (case-sensitive, as Redis), functions by name
// (case-insensitive, as Redis's function dictionary).
type functionSet struct {
	// writeMu is held by each change from its check to its record in the
	// effect log and the replication stream (functions_persist.go), so
	// that memory, log and stream see the changes in one order.
	writeMu sync.Mutex
	mu      sync.RWMutex
	libs    map[string]*script.Library
	funcs   map[string]*script.Function
	// ver counts the changes, for the checkpoints: one writes the set
	// when it changed since the last.
	ver uint64
}

// lookup finds a function by name in any letter case.
func (f *functionSet) lookup(name []byte) *script.Function {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.funcs[strings.ToLower(string(name))]
}

// add links libs into the set. A library of the same name is replaced
// when replace, else refused; a function name already taken by another
// library is refused. On refusal nothing changes; the error is Redis's
// text (libraryJoin, functionsCreateWithLibraryCtx).
func (f *functionSet) add(libs []*script.Library, replace bool, single bool) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.libs == nil {
		f.libs, f.funcs = map[string]*script.Library{}, map[string]*script.Function{}
	}
	replaced := map[string]bool{}
	for _, l := range libs {
		if f.libs[l.Name] != nil {
			if !replace {
				if single {
					return "ERR Library '" + l.Name + "' already exists"
				}
				return "ERR Library " + l.Name + " already exists"
			}
			replaced[l.Name] = true
		}
	}
	for _, l := range libs {
		for _, fn := range l.Funcs {
			if old := f.funcs[strings.ToLower(fn.Name)]; old != nil && !replaced[old.Lib.Name] {
				return "ERR Function " + fn.Name + " already exists"
			}
		}
	}
	f.ver++
	for name := range replaced {
		f.unlinkLocked(f.libs[name])
	}
	for _, l := range libs {
		f.libs[l.Name] = l
		for _, fn := range l.Funcs {
			f.funcs[strings.ToLower(fn.Name)] = fn
		}
	}
	return ""
}

func (f *functionSet) unlinkLocked(l *script.Library) {
	for _, fn := range l.Funcs {
		delete(f.funcs, strings.ToLower(fn.Name))
	}
	delete(f.libs, l.Name)
}

// remove deletes library name; false if there is none.
func (f *functionSet) remove(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.libs[name]
	if l == nil {
		return false
	}
	f.unlinkLocked(l)
	f.ver++
	return true
}

// flush removes every library.
func (f *functionSet) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.libs, f.funcs = nil, nil
	f.ver++
}

// replaceAll makes libs the whole set (FUNCTION RESTORE FLUSH); on a
// refusal (two of them declaring one function) nothing changes, as Redis
// builds the new set aside before it swaps it in.
func (f *functionSet) replaceAll(libs []*script.Library) string {
	var fresh functionSet
	if msg := fresh.add(libs, false, false); msg != "" {
		return msg
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.libs, f.funcs = fresh.libs, fresh.funcs
	f.ver++
	return ""
}

// version is the count of changes (ver) and the libraries, by name, as
// that change left them.
func (f *functionSet) version() (uint64, []*script.Library) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.ver, f.listLocked()
}

// list returns the libraries ordered by name.
func (f *functionSet) list() []*script.Library {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.listLocked()
}

func (f *functionSet) listLocked() []*script.Library {
	out := make([]*script.Library, 0, len(f.libs))
	for _, l := range f.libs {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b *script.Library) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// counts is FUNCTION STATS's libraries_count and functions_count.
func (f *functionSet) counts() (libs, funcs int) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.libs), len(f.funcs)
}
