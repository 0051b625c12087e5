package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Module values (RDB_TYPE_MODULE_2): the module type's 64-bit id, then
// the data its rdb_save callback wrote as opcodes (an opcode, then a
// length-encoded integer, a 4- or 8-byte little-endian float, or a
// string), then the EOF opcode. This is how a server carries a value of a
// type the Redis core has no number for; a server without the module
// refuses the value (a file's load fails, RESTORE answers "Bad data
// format").

// ModuleKind is the kind of one item of a module value's data.
type ModuleKind uint8

const (
	ModuleSInt   ModuleKind = modSInt
	ModuleUInt   ModuleKind = modUInt
	ModuleFloat  ModuleKind = modFloat
	ModuleDouble ModuleKind = modDouble
	ModuleString ModuleKind = modString
)

// ModuleItem is one item a module saved: Int for SInt (its two's
// complement bits, as Redis saves an int64) and UInt, Float for Float
// (rounded to float32 on writing) and Double, Str for String.
type ModuleItem struct {
	Kind  ModuleKind
	Int   uint64
	Float float64
	Str   []byte
}

// moduleCharset is the characters of a module type name, each 6 bits of
// the id in the order of this string (Redis's ModuleTypeNameCharSet).
const moduleCharset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// ModuleID is the id of module type name (9 characters of moduleCharset)
// at encoding version ver (0 to 1023): the name's characters from the
// top, 6 bits each, then the version in the low 10 bits, as Redis's
// moduleTypeEncodeId. false for a name or version Redis refuses.
func ModuleID(name string, ver int) (uint64, bool) {
	if len(name) != 9 || ver < 0 || ver > 1023 {
		return 0, false
	}
	var id uint64
	for i := 0; i < 9; i++ {
		pos := -1
		for j := 0; j < len(moduleCharset); j++ {
			if moduleCharset[j] == name[i] {
				pos = j
				break
			}
		}
		if pos < 0 {
			return 0, false
		}
		id = id<<6 | uint64(pos)
	}
	return id<<10 | uint64(ver), true
}

// moduleName decodes a module type id: nine characters of 6 bits from the
// top, then a 10-bit encoding version.
func moduleName(id uint64) (string, int) {
	var b [9]byte
	ver := int(id & 1023)
	id >>= 10
	for i := 8; i >= 0; i-- {
		b[i] = moduleCharset[id&63]
		id >>= 6
	}
	return string(b[:]), ver
}

// appendModule appends a module value's body: its id and items, then EOF.
func appendModule(dst []byte, id uint64, items []ModuleItem) []byte {
	dst = appendLen(dst, id)
	for _, it := range items {
		dst = appendLen(dst, uint64(it.Kind))
		switch it.Kind {
		case ModuleSInt, ModuleUInt:
			dst = appendLen(dst, it.Int)
		case ModuleFloat:
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(it.Float)))
		case ModuleDouble:
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(it.Float))
		case ModuleString:
			dst = AppendString(dst, it.Str)
		}
	}
	return appendLen(dst, modEOF)
}

// checkModule is objectType's check of a module value: a name and version
// Redis accepts, items of known kinds.
func checkModule(v *Value) (uint64, error) {
	id, ok := ModuleID(v.Module, v.ModuleVersion)
	if !ok {
		return 0, fmt.Errorf("rdb: bad module type name %q or encoding version %d", v.Module, v.ModuleVersion)
	}
	for _, it := range v.ModuleData {
		if it.Kind < ModuleSInt || it.Kind > ModuleString {
			return 0, errors.New("rdb: module item of unknown kind")
		}
	}
	return id, nil
}

// moduleValue reads a module value's id and items, up to its EOF opcode.
// Each item takes at least two bytes of input, so a forged value costs no
// more memory than the bytes present.
func (s *src) moduleValue(v *Value) error {
	id, err := s.plainLen()
	if err != nil {
		return err
	}
	if id == 0 {
		return s.fail("module type id 0")
	}
	v.Module, v.ModuleVersion = moduleName(id)
	for {
		op, err := s.plainLen()
		if err != nil {
			return err
		}
		it := ModuleItem{Kind: ModuleKind(op)}
		switch op {
		case modEOF:
			return nil
		case modSInt, modUInt:
			it.Int, err = s.plainLen()
		case modFloat:
			var b []byte
			if b, err = s.take(4); err == nil {
				it.Float = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
			}
		case modDouble:
			it.Float, err = s.binaryDouble()
		case modString:
			it.Str, err = s.str()
		default:
			return s.fail(fmt.Sprintf("unknown module opcode %d", op))
		}
		if err != nil {
			return err
		}
		v.ModuleData = append(v.ModuleData, it)
	}
}
