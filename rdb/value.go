package rdb

// Type is a value's kind, whatever its encoding in the file.
type Type uint8

const (
	TypeString Type = iota + 1
	TypeList
	TypeSet
	TypeZSet
	TypeHash
	// TypeStream values are read past, not decoded: Value carries only
	// their type.
	TypeStream
	// TypeModule is a module value (RDB_TYPE_MODULE_2): its type's name
	// and encoding version, and the items its module saved (module.go).
	TypeModule
)

func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeList:
		return "list"
	case TypeSet:
		return "set"
	case TypeZSet:
		return "zset"
	case TypeHash:
		return "hash"
	case TypeStream:
		return "stream"
	case TypeModule:
		return "module"
	}
	return "unknown"
}

// Value is one decoded value. Slices are the caller's to keep, but for
// a Reader that borrows (Reader.Borrow).
type Value struct {
	Type Type
	// Str is a string's bytes (an int-encoded string in decimal).
	Str []byte
	// Elems is a list's elements in order, a set's members, a sorted set's
	// members (Scores[i] is Elems[i]'s score), or a hash's fields and values
	// alternating: field, value, field, value.
	Elems  [][]byte
	Scores []float64
	// Ints, only from a borrowing Reader (Reader.Borrow), is a sorted set
	// whose members are all integers below 2^53 in magnitude, each its own
	// score, in rising order (a rate limiter's window of timestamps, in a
	// listpack): its members as numbers, in place of Elems and Scores,
	// never turned into text.
	Ints []int64
	// Module is a module value's type name (9 characters, from its id),
	// ModuleVersion its encoding version (0 to 1023), ModuleData the
	// items the module saved, in order.
	Module        string
	ModuleVersion int
	ModuleData    []ModuleItem
	// Encoding is the RDB object type byte it was read from (for example
	// 18 for a quicklist of listpacks), so callers can tell encodings apart.
	Encoding uint8
}

// Len is the number of elements (hash pairs count once); 1 for a string.
func (v *Value) Len() int {
	if v.Ints != nil {
		return len(v.Ints)
	}
	switch v.Type {
	case TypeString:
		return 1
	case TypeHash:
		return len(v.Elems) / 2
	}
	return len(v.Elems)
}
