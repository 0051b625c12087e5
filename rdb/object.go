package rdb

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// Reading one value of a given object type, in every encoding Redis 7.0
// loads (rdbLoadObject). Blobs (ziplists, listpacks, intsets, zipmaps) are
// decoded by blobs.go.

// object reads a value of RDB type t.
func (s *src) object(t byte) (Value, error) {
	v := Value{Encoding: t}
	var err error
	switch t {
	case typeString:
		v.Type = TypeString
		v.Str, err = s.str()
	case typeList, typeSet:
		v.Type = TypeList
		if t == typeSet {
			v.Type = TypeSet
		}
		v.Elems, err = s.strings(1)
	case typeHash:
		v.Type = TypeHash
		v.Elems, err = s.strings(2)
	case typeZSet, typeZSet2:
		v.Type = TypeZSet
		err = s.zset(&v, t == typeZSet2)
	case typeListZiplist, typeSetIntset, typeZSetZiplist, typeHashZiplist, typeHashZipmap,
		typeHashListpack, typeZSetListpack, typeSetListpack:
		err = s.blobObject(&v, t)
	case typeListQuicklist, typeListQuicklist2:
		v.Type = TypeList
		err = s.quicklist(&v, t == typeListQuicklist2)
	case typeStreamListpacks, typeStreamListpack2, typeStreamListpack3:
		v.Type = TypeStream
		err = s.skipStream(t)
	case typeModule2:
		v.Type = TypeModule
		err = s.moduleValue(&v)
	case typeModule:
		return v, s.fail("module value of the pre-4.0 format cannot be read past")
	default:
		return v, s.fail(fmt.Sprintf("unknown object type %d", t))
	}
	if s.borrow {
		s.keep(&v)
	}
	return v, err
}

// strings reads a count, then count*per strings.
func (s *src) strings(per int) ([][]byte, error) {
	n, err := s.count()
	if err != nil {
		return nil, err
	}
	if n > math.MaxInt/per/2 {
		return nil, s.fail("count too large")
	}
	n *= per
	out := s.elemsBuf(n)
	for i := 0; i < n; i++ {
		b, err := s.str()
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func (s *src) zset(v *Value, binary bool) error {
	n, err := s.count()
	if err != nil {
		return err
	}
	v.Elems = s.elemsBuf(n)
	v.Scores = s.scoresBuf(n)
	for i := 0; i < n; i++ {
		m, err := s.str()
		if err != nil {
			return err
		}
		var f float64
		if binary {
			f, err = s.binaryDouble()
		} else {
			f, err = s.stringDouble()
		}
		if err != nil {
			return err
		}
		if math.IsNaN(f) {
			return s.fail("sorted set score is NaN")
		}
		v.Elems, v.Scores = append(v.Elems, m), append(v.Scores, f)
	}
	return nil
}

func (s *src) binaryDouble() (float64, error) {
	b, err := s.take(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

// stringDouble is the old double: a length byte (253 NaN, 254 +inf,
// 255 -inf) and that many bytes of decimal text.
func (s *src) stringDouble() (float64, error) {
	n, err := s.readByte()
	if err != nil {
		return 0, err
	}
	switch n {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	b, err := s.take(int(n))
	if err != nil {
		return 0, err
	}
	f, ok := parseScore(b)
	if !ok {
		return 0, s.fail("bad double value")
	}
	return f, nil
}

// parseScore reads a score's text as strtod does: out of range is an
// infinity, not an error; NaN is refused.
func parseScore(b []byte) (float64, bool) {
	// Integers of up to 15 digits (a listpack's integer entries, most
	// scores of rate limiters: timestamps) are exact as float64.
	if n := len(b); n > 0 && n <= 15 {
		neg := b[0] == '-'
		v, i := int64(0), 0
		if neg {
			i = 1
		}
		for ; i < n && b[i] >= '0' && b[i] <= '9'; i++ {
			v = v*10 + int64(b[i]-'0')
		}
		if i == n && n > btoi(neg) {
			if neg {
				return -float64(v), true // -0 stays negative, as strtod reads it
			}
			return float64(v), true
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	return f, !math.IsNaN(f)
}

// blobObject reads a value stored as one string holding a ziplist,
// listpack, intset or zipmap.
func (s *src) blobObject(v *Value, t byte) error {
	at := s.offset()
	b, err := s.str()
	if err != nil {
		return err
	}
	if t == typeZSetListpack && s.borrow {
		if ints, ok := listpackSelfKeyed(b, s.ints[:0]); ok {
			v.Type, v.Ints = TypeZSet, ints
			s.ints = ints[:0]
			return nil
		}
	}
	elems := s.elemsBuf(0)
	switch t {
	case typeListZiplist, typeZSetZiplist, typeHashZiplist:
		elems, err = ziplistEntries(b, elems, s.intText())
	case typeHashListpack, typeZSetListpack, typeSetListpack:
		elems, err = listpackEntries(b, elems, s.intText())
	case typeSetIntset:
		elems, err = intsetEntries(b, elems, s.intText())
	case typeHashZipmap:
		elems, err = zipmapEntries(b, elems)
	}
	if err != nil {
		return &Error{Offset: at, Msg: err.Error()}
	}
	switch t {
	case typeListZiplist:
		v.Type = TypeList
	case typeSetIntset, typeSetListpack:
		v.Type = TypeSet
	case typeHashZiplist, typeHashListpack, typeHashZipmap:
		v.Type = TypeHash
		if len(elems)%2 != 0 {
			return &Error{Offset: at, Msg: "hash with an odd number of entries"}
		}
	case typeZSetZiplist, typeZSetListpack:
		v.Type = TypeZSet
		if len(elems)%2 != 0 {
			return &Error{Offset: at, Msg: "sorted set with an odd number of entries"}
		}
		n := len(elems) / 2
		v.Scores = s.scoresBuf(n)
		for i := range n {
			f, ok := parseScore(elems[2*i+1])
			if !ok {
				return &Error{Offset: at, Msg: "bad sorted set score"}
			}
			v.Scores = append(v.Scores, f)
			elems[i] = elems[2*i]
		}
		elems = elems[:n]
	}
	v.Elems = elems
	return nil
}

// quicklist reads a list of nodes: ziplists (v1), or listpacks and plain
// elements (v2). Empty nodes are skipped, as Redis does.
func (s *src) quicklist(v *Value, v2 bool) error {
	n, err := s.count()
	if err != nil {
		return err
	}
	if s.borrow {
		v.Elems = s.elemsBuf(0)
	}
	for i := 0; i < n; i++ {
		container := uint64(qlPacked)
		if v2 {
			if container, err = s.plainLen(); err != nil {
				return err
			}
			if container != qlPlain && container != qlPacked {
				return s.fail(fmt.Sprintf("quicklist node container %d", container))
			}
		}
		at := s.offset()
		b, err := s.str()
		if err != nil {
			return err
		}
		switch {
		case container == qlPlain:
			v.Elems = append(v.Elems, b)
		case v2:
			v.Elems, err = listpackEntries(b, v.Elems, s.intText())
		default:
			v.Elems, err = ziplistEntries(b, v.Elems, s.intText())
		}
		if err != nil {
			return &Error{Offset: at, Msg: err.Error()}
		}
	}
	return nil
}

// skipStream reads past a stream (rdbLoadObject's stream branch): its
// listpacks, metadata, consumer groups, their pending entries and consumers.
func (s *src) skipStream(t byte) error {
	n, err := s.count()
	if err != nil {
		return err
	}
	for i := 0; i < 2*n; i++ { // node key, listpack
		if _, err := s.str(); err != nil {
			return err
		}
	}
	lens := 3 // length, last id ms, seq
	if t >= typeStreamListpack2 {
		lens += 5 // first id, max deleted id, entries added
	}
	if err := s.skipLens(lens); err != nil {
		return err
	}
	groups, err := s.count()
	if err != nil {
		return err
	}
	for g := 0; g < groups; g++ {
		if _, err := s.str(); err != nil {
			return err
		}
		lens := 2
		if t >= typeStreamListpack2 {
			lens++ // entries read
		}
		if err := s.skipLens(lens); err != nil {
			return err
		}
		pel, err := s.count()
		if err != nil {
			return err
		}
		for p := 0; p < pel; p++ {
			if _, err := s.take(16 + 8); err != nil { // id, delivery time
				return err
			}
			if err := s.skipLens(1); err != nil { // delivery count
				return err
			}
		}
		consumers, err := s.count()
		if err != nil {
			return err
		}
		for c := 0; c < consumers; c++ {
			if _, err := s.str(); err != nil {
				return err
			}
			times := 8
			if t >= typeStreamListpack3 {
				times += 8 // active time
			}
			if _, err := s.take(times); err != nil {
				return err
			}
			cpel, err := s.count()
			if err != nil {
				return err
			}
			for p := 0; p < cpel; p++ {
				if _, err := s.take(16); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (s *src) skipLens(n int) error {
	for ; n > 0; n-- {
		if _, err := s.plainLen(); err != nil {
			return err
		}
	}
	return nil
}

// skipModuleValue reads past module AUX data (the opcode format, as
// moduleValue reads), up to its EOF opcode.
func (s *src) skipModuleValue() error {
	for {
		op, err := s.plainLen()
		if err != nil {
			return err
		}
		switch op {
		case modEOF:
			return nil
		case modSInt, modUInt:
			_, err = s.plainLen()
		case modFloat:
			_, err = s.take(4)
		case modDouble:
			_, err = s.take(8)
		case modString:
			_, err = s.str()
		default:
			return s.fail(fmt.Sprintf("unknown module opcode %d", op))
		}
		if err != nil {
			return err
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
