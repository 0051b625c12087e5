package rdb

import (
	"encoding/binary"
	"errors"
)

// DUMP payloads: a value in RDB object encoding, then the RDB version (2
// bytes, little-endian) and the CRC-64 of everything before (8 bytes,
// little-endian), as Redis's createDumpPayload writes them.

// ErrDumpPayload is a payload refused by its trailer: too short, a version
// newer than Version, or a wrong checksum (RESTORE's "DUMP payload version
// or checksum are wrong").
var ErrDumpPayload = errors.New("DUMP payload version or checksum are wrong")

// EncodeDump returns v's DUMP payload.
func EncodeDump(v *Value) ([]byte, error) {
	p, err := AppendValue(nil, v)
	if err != nil {
		return nil, err
	}
	p = binary.LittleEndian.AppendUint16(p, Version)
	return binary.LittleEndian.AppendUint64(p, CRC64(0, p)), nil
}

// VerifyDump applies Redis 7.0's acceptance rule (verifyDumpPayload): at
// least 10 bytes, a version at most Version, a matching checksum.
func VerifyDump(p []byte) bool {
	if len(p) < 10 {
		return false
	}
	n := len(p) - 10
	if binary.LittleEndian.Uint16(p[n:]) > Version {
		return false
	}
	return binary.LittleEndian.Uint64(p[n+2:]) == CRC64(0, p[:n+2])
}

// DecodeDump decodes a payload: ErrDumpPayload when VerifyDump refuses it,
// another error when the value itself is malformed or empty (RESTORE's
// "Bad data format").
func DecodeDump(p []byte) (Value, error) {
	if !VerifyDump(p) {
		return Value{}, ErrDumpPayload
	}
	s := newMemSrc(p[:len(p)-10])
	t, err := s.readByte()
	if err != nil {
		return Value{}, err
	}
	v, err := s.object(t)
	if err != nil {
		return Value{}, err
	}
	if v.Type != TypeString && v.Type != TypeStream && v.Type != TypeModule && len(v.Elems) == 0 {
		return Value{}, &Error{Offset: s.offset(), Msg: "empty aggregate"}
	}
	return v, nil
}

// ErrNotFunction is a FUNCTION RESTORE payload holding something other
// than libraries.
var ErrNotFunction = errors.New("given type is not a function")

// EncodeFunctionsDump returns FUNCTION DUMP's payload: each library's code
// after the FUNCTION2 opcode, then the version and checksum trailer.
func EncodeFunctionsDump(codes [][]byte) []byte {
	var p []byte
	for _, c := range codes {
		p = AppendString(append(p, opFunction2), c)
	}
	p = binary.LittleEndian.AppendUint16(p, Version)
	return binary.LittleEndian.AppendUint64(p, CRC64(0, p))
}

// DecodeFunctionsDump reads a FUNCTION RESTORE payload back into the
// libraries' codes: ErrDumpPayload when VerifyDump refuses it,
// ErrNotFunction for another record, another error when malformed.
func DecodeFunctionsDump(p []byte) ([][]byte, error) {
	if !VerifyDump(p) {
		return nil, ErrDumpPayload
	}
	s := newMemSrc(p[:len(p)-10])
	var codes [][]byte
	for s.left() > 0 {
		t, err := s.readByte()
		if err != nil {
			return nil, err
		}
		if t != opFunction2 {
			return nil, ErrNotFunction
		}
		code, err := s.str()
		if err != nil {
			return nil, err
		}
		codes = append(codes, code)
	}
	return codes, nil
}
