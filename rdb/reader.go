package rdb

import (
	"fmt"
	"io"
)

// Kind says what a Record is.
type Kind uint8

const (
	// KindKey is a key with its value and expiry.
	KindKey Kind = iota + 1
	// KindAux is an AUX field: Key is its name, Value.Str its value.
	KindAux
	// KindResizeDB is a RESIZEDB hint for DB: Size keys, Expires of them
	// with a TTL.
	KindResizeDB
	// KindFunction is a function library (Value.Str is its code).
	KindFunction
	// KindModuleAux is a module's AUX data, read past (Value.Module names
	// the module).
	KindModuleAux
)

// Record is one thing read from a file, in file order.
type Record struct {
	Kind   Kind
	DB     int
	Key    []byte
	Value  Value
	Expire int64 // unix time in milliseconds; 0 for none
	Offset int64 // where the record starts in the file
	// Size and Expires are a RESIZEDB record's hints.
	Size, Expires uint64
}

// Reader reads an RDB file record by record: only the current record is
// held, so a file of any size streams through.
type Reader struct {
	// Borrow makes a key's Record.Key and every slice of its Value (a
	// string's bytes, an aggregate's elements, their bytes, its scores)
	// valid only until the next call of Next: they are read into buffers
	// the Reader reuses, which spares their allocations to a caller that
	// copies what it keeps anyway (a loader). Not the slices of other
	// records (AUX fields, function libraries), which are rare.
	Borrow bool

	s              *src
	version        int
	db             int
	done           bool
	keyBuf, valBuf []byte
}

// NewReader reads the header of an RDB file. size is the input's length
// when known (a file's), or -1; with it, a forged length is refused before
// anything is allocated for it.
func NewReader(r io.Reader, size int64) (*Reader, error) {
	s := newSrc(r, size)
	hdr, err := s.take(9)
	if err != nil {
		return nil, err
	}
	if string(hdr[:5]) != "REDIS" {
		return nil, &Error{Offset: 0, Msg: "not an RDB file (no REDIS signature)"}
	}
	v := 0
	for _, c := range hdr[5:] {
		if c < '0' || c > '9' {
			return nil, &Error{Offset: 5, Msg: "bad RDB version"}
		}
		v = v*10 + int(c-'0')
	}
	if v < 1 || v > maxFileVersion {
		return nil, &Error{Offset: 5, Msg: fmt.Sprintf("can't handle RDB format version %d", v)}
	}
	return &Reader{s: s, version: v}, nil
}

// Version is the file's RDB version.
func (r *Reader) Version() int { return r.version }

// Offset is how many bytes have been read.
func (r *Reader) Offset() int64 { return r.s.offset() }

// Next returns the next record, or io.EOF once the end marker has been
// read and the checksum verified (a zero checksum means the writer did not
// compute one, as Redis's rdbchecksum no).
func (r *Reader) Next() (Record, error) {
	if r.done {
		return Record{}, io.EOF
	}
	s := r.s
	var expire int64
	for {
		at := s.offset()
		op, err := s.readByte()
		if err != nil {
			return Record{}, err
		}
		switch op {
		case opExpireTimeMs:
			b, err := s.take(8)
			if err != nil {
				return Record{}, err
			}
			expire = leInt(b)
		case opExpireTime:
			b, err := s.take(4)
			if err != nil {
				return Record{}, err
			}
			expire = leInt(b) * 1000
		case opIdle:
			if _, err := s.plainLen(); err != nil {
				return Record{}, err
			}
		case opFreq:
			if _, err := s.readByte(); err != nil {
				return Record{}, err
			}
		case opSelectDB:
			n, err := s.plainLen()
			if err != nil {
				return Record{}, err
			}
			if n > 1<<20 {
				return Record{}, &Error{Offset: at, Msg: fmt.Sprintf("database number %d out of range", n)}
			}
			r.db = int(n)
		case opResizeDB:
			size, err := s.plainLen()
			if err != nil {
				return Record{}, err
			}
			exp, err := s.plainLen()
			if err != nil {
				return Record{}, err
			}
			return Record{Kind: KindResizeDB, DB: r.db, Size: size, Expires: exp, Offset: at}, nil
		case opAux:
			k, err := s.str()
			if err != nil {
				return Record{}, err
			}
			v, err := s.str()
			if err != nil {
				return Record{}, err
			}
			return Record{Kind: KindAux, DB: r.db, Key: k, Value: Value{Type: TypeString, Str: v}, Offset: at}, nil
		case opModuleAux:
			id, err := s.plainLen()
			if err != nil {
				return Record{}, err
			}
			whenOp, err := s.plainLen()
			if err != nil {
				return Record{}, err
			}
			if whenOp != modUInt {
				return Record{}, &Error{Offset: at, Msg: "bad when_opcode in module AUX data"}
			}
			if _, err := s.plainLen(); err != nil {
				return Record{}, err
			}
			if err := s.skipModuleValue(); err != nil {
				return Record{}, err
			}
			name, ver := moduleName(id)
			return Record{Kind: KindModuleAux, DB: r.db, Value: Value{Type: TypeModule, Module: name, ModuleVersion: ver}, Offset: at}, nil
		case opFunction2:
			code, err := s.str()
			if err != nil {
				return Record{}, err
			}
			return Record{Kind: KindFunction, DB: r.db, Value: Value{Type: TypeString, Str: code}, Offset: at}, nil
		case opFunction:
			return Record{}, &Error{Offset: at, Msg: "pre-GA function format not supported"}
		case opEOF:
			return Record{}, r.finish()
		default:
			var k []byte
			var v Value
			if r.Borrow {
				k, err = s.strInto(r.keyBuf[:0])
				r.keyBuf = k
			} else {
				k, err = s.str()
			}
			if err != nil {
				return Record{}, err
			}
			if op == typeString && r.Borrow {
				v = Value{Type: TypeString, Encoding: typeString}
				v.Str, err = s.strInto(r.valBuf[:0])
				r.valBuf = v.Str
			} else {
				s.borrow, s.arena = r.Borrow, s.arena[:0]
				v, err = s.object(op)
				s.borrow = false
			}
			if err != nil {
				return Record{}, err
			}
			return Record{Kind: KindKey, DB: r.db, Key: k, Value: v, Expire: expire, Offset: at}, nil
		}
	}
}

// finish checks the trailer after the EOF opcode.
func (r *Reader) finish() error {
	r.done = true
	s := r.s
	if r.version < 5 {
		return io.EOF
	}
	s.syncCRC()
	want := s.crc
	b, err := s.take(8)
	if err != nil {
		return err
	}
	got := uint64(leInt(b))
	if got != 0 && got != want {
		return &Error{Offset: s.offset() - 8, Msg: fmt.Sprintf("wrong RDB checksum %#016x, computed %#016x", got, want)}
	}
	return io.EOF
}
