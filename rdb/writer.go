package rdb

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"strconv"
)

// Writing chooses, per type, the simplest encoding redis-server 7.0 loads:
// strings as Redis writes them (small integers int-encoded, longer strings
// LZF-compressed when that saves 4 bytes or more), lists as plain lists of
// strings, sets and hashes as plain sequences of strings, sorted sets with
// binary doubles. Redis re-encodes small aggregates (listpacks) as it loads.

// AppendValue appends v in RDB object encoding: its type byte, then its
// body, as a DUMP payload holds it.
func AppendValue(dst []byte, v *Value) ([]byte, error) {
	t, err := objectType(v)
	if err != nil {
		return dst, err
	}
	return appendBody(append(dst, t), v), nil
}

// objectType is the type byte v is written with, or an error for a value
// that cannot be written.
func objectType(v *Value) (byte, error) {
	switch v.Type {
	case TypeString:
		return typeString, nil
	case TypeList:
		return typeList, nil
	case TypeSet:
		return typeSet, nil
	case TypeHash:
		if len(v.Elems)%2 != 0 {
			return 0, errors.New("rdb: hash with an odd number of fields and values")
		}
		return typeHash, nil
	case TypeZSet:
		if len(v.Scores) != len(v.Elems) {
			return 0, errors.New("rdb: sorted set with members and scores of different counts")
		}
		return typeZSet2, nil
	}
	return 0, errors.New("rdb: cannot write a value of type " + v.Type.String())
}

// appendBody appends v's body for the type objectType chose.
func appendBody(dst []byte, v *Value) []byte {
	switch v.Type {
	case TypeString:
		return AppendString(dst, v.Str)
	case TypeZSet:
		dst = appendLen(dst, uint64(len(v.Elems)))
		for i, e := range v.Elems {
			dst = AppendString(dst, e)
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Scores[i]))
		}
		return dst
	}
	dst = appendLen(dst, uint64(v.Len()))
	for _, e := range v.Elems {
		dst = AppendString(dst, e)
	}
	return dst
}

func appendLen(dst []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(dst, byte(n))
	case n < 1<<14:
		return append(dst, byte(n>>8)|len14bit<<6, byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, len32bit), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, len64bit), n)
}

// AppendString appends s as Redis's rdbSaveRawString does: a canonical
// integer of at most 11 characters that fits 32 bits int-encoded, a string
// over 20 bytes LZF-compressed when that saves at least 4 bytes, else raw.
func AppendString(dst []byte, s []byte) []byte {
	if len(s) <= 11 && len(s) > 0 {
		if v, ok := canonicalInt(s); ok {
			switch {
			case v >= math.MinInt8 && v <= math.MaxInt8:
				return append(dst, lenEnc<<6|encInt8, byte(v))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				return binary.LittleEndian.AppendUint16(append(dst, lenEnc<<6|encInt16), uint16(v))
			case v >= math.MinInt32 && v <= math.MaxInt32:
				return binary.LittleEndian.AppendUint32(append(dst, lenEnc<<6|encInt32), uint32(v))
			}
		}
	}
	if len(s) > 20 {
		if c := lzfCompress(s, len(s)-4); c != nil {
			dst = append(dst, lenEnc<<6|encLZF)
			dst = appendLen(dst, uint64(len(c)))
			dst = appendLen(dst, uint64(len(s)))
			return append(dst, c...)
		}
	}
	return append(appendLen(dst, uint64(len(s))), s...)
}

// canonicalInt parses s as an integer that prints back as exactly s.
func canonicalInt(s []byte) (int64, bool) {
	v, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil {
		return 0, false
	}
	var b [20]byte
	return v, string(strconv.AppendInt(b[:0], v, 10)) == string(s)
}

// Writer writes an RDB file: NewWriter writes the header, Key and the
// others append records, Close writes the end marker and checksum.
type Writer struct {
	w   io.Writer
	buf []byte
	crc uint64
	err error
	db  int
}

// NewWriter starts a version-10 file on w, with aux fields (name, value
// pairs) after the header.
func NewWriter(w io.Writer, aux ...string) *Writer {
	wr := &Writer{w: w, buf: make([]byte, 0, 64<<10), db: -1}
	wr.buf = append(wr.buf, "REDIS0010"...)
	for i := 0; i+1 < len(aux); i += 2 {
		wr.buf = append(wr.buf, opAux)
		wr.buf = AppendString(wr.buf, []byte(aux[i]))
		wr.buf = AppendString(wr.buf, []byte(aux[i+1]))
	}
	return wr
}

// SelectDB starts database db, with RESIZEDB hints (keys, keys with a TTL).
func (w *Writer) SelectDB(db int, size, expires uint64) {
	w.buf = appendLen(append(w.buf, opSelectDB), uint64(db))
	w.buf = appendLen(append(w.buf, opResizeDB), size)
	w.buf = appendLen(w.buf, expires)
	w.db = db
}

// Key writes a key; expire is its unix time in milliseconds, 0 for none.
func (w *Writer) Key(key []byte, v *Value, expire int64) error {
	if w.err != nil {
		return w.err
	}
	if w.db < 0 {
		w.SelectDB(0, 0, 0)
	}
	b, err := AppendKey(w.buf, key, v, expire)
	if err != nil {
		return err
	}
	w.buf = b
	return w.flushIfFull()
}

// AppendKey appends a key's records (its expiry, if any, then its type,
// name and value) as Writer.Key writes them, for Raw.
func AppendKey(dst, key []byte, v *Value, expire int64) ([]byte, error) {
	t, err := objectType(v)
	if err != nil {
		return dst, err
	}
	if expire != 0 {
		dst = binary.LittleEndian.AppendUint64(append(dst, opExpireTimeMs), uint64(expire))
	}
	dst = AppendString(append(dst, t), key)
	return appendBody(dst, v), nil
}

// Raw writes keys AppendKey encoded, of the database SelectDB started.
func (w *Writer) Raw(keys []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) > 0 {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.crc = CRC64(w.crc, keys)
	_, w.err = w.w.Write(keys)
	return w.err
}

// Function writes a function library's code (FUNCTION2).
func (w *Writer) Function(code []byte) error {
	w.buf = AppendString(append(w.buf, opFunction2), code)
	return w.flushIfFull()
}

func (w *Writer) flushIfFull() error {
	if len(w.buf) >= 60<<10 {
		return w.flush()
	}
	return nil
}

func (w *Writer) flush() error {
	if w.err != nil {
		return w.err
	}
	w.crc = CRC64(w.crc, w.buf)
	_, w.err = w.w.Write(w.buf)
	w.buf = w.buf[:0]
	return w.err
}

// Close writes the end marker and the checksum and flushes; it does not
// close the underlying writer.
func (w *Writer) Close() error {
	w.buf = append(w.buf, opEOF)
	w.crc = CRC64(w.crc, w.buf)
	sum := w.crc
	_, err := w.w.Write(w.buf)
	if w.err == nil {
		w.err = err
	}
	if w.err == nil {
		_, w.err = w.w.Write(binary.LittleEndian.AppendUint64(nil, sum))
	}
	w.buf = w.buf[:0]
	return w.err
}
