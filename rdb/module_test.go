package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

func TestModuleID(t *testing.T) {
	for _, c := range []struct {
		name string
		ver  int
		id   uint64
		ok   bool
	}{
		{"AAAAAAAAA", 0, 0, true},
		{"AAAAAAAAB", 5, 1<<10 | 5, true},
		{"BAAAAAAAA", 0, 1 << 58, true},
		{"_________", 1023, math.MaxUint64, true},
		{"AAAAAAAA", 0, 0, false},     // 8 characters
		{"AAAAAAAAAA", 0, 0, false},   // 10
		{"AAAA.AAAA", 0, 0, false},    // not in the charset
		{"AAAAAAAAA", 1024, 0, false}, // version past 10 bits
		{"AAAAAAAAA", -1, 0, false},
	} {
		id, ok := ModuleID(c.name, c.ver)
		if ok != c.ok || ok && id != c.id {
			t.Errorf("ModuleID(%q, %d) = %#x %v, want %#x %v", c.name, c.ver, id, ok, c.id, c.ok)
			continue
		}
		if ok {
			if name, ver := moduleName(id); name != c.name || ver != c.ver {
				t.Errorf("moduleName(%#x) = %q %d, want %q %d", id, name, ver, c.name, c.ver)
			}
		}
	}
}

// moduleCases are module values of every item kind, each written and
// read back by DUMP payloads and files.
var moduleCases = []struct {
	name string
	v    Value
}{
	{"one string", Value{Type: TypeModule, Module: "CL-WINDOW", ModuleData: []ModuleItem{{Kind: ModuleString, Str: []byte{0x80, 0x01, 0x03}}}}},
	{"no items", Value{Type: TypeModule, Module: "mymodtype", ModuleVersion: 7}},
	{"integers", Value{Type: TypeModule, Module: "ReJSON-RL", ModuleVersion: 3, ModuleData: []ModuleItem{
		{Kind: ModuleSInt, Int: uint64(1<<64 - 5)}, {Kind: ModuleUInt, Int: math.MaxUint64}, {Kind: ModuleUInt}, {Kind: ModuleSInt, Int: 1 << 40}}}},
	{"floats", Value{Type: TypeModule, Module: "_________", ModuleVersion: 1023, ModuleData: []ModuleItem{
		{Kind: ModuleFloat, Float: 1.5}, {Kind: ModuleFloat, Float: math.Inf(-1)}, {Kind: ModuleDouble, Float: math.Pi}, {Kind: ModuleDouble, Float: math.Inf(1)}}}},
	{"strings", Value{Type: TypeModule, Module: "AAAAAAAAA", ModuleVersion: 1, ModuleData: []ModuleItem{
		{Kind: ModuleString, Str: []byte("12345")}, {Kind: ModuleString, Str: []byte{}},
		{Kind: ModuleString, Str: []byte(strings.Repeat("abc", 100))}, {Kind: ModuleUInt, Int: 9}}}},
}

func TestModuleRoundTrip(t *testing.T) {
	for _, c := range moduleCases {
		p, err := EncodeDump(&c.v)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p[0] != typeModule2 {
			t.Errorf("%s: type byte %d, want %d", c.name, p[0], typeModule2)
		}
		got, err := DecodeDump(p)
		if err != nil || canonical(got) != canonical(c.v) {
			t.Errorf("%s: DUMP payload read back as %s, %v; want %s", c.name, canonical(got), err, canonical(c.v))
		}
		var buf bytes.Buffer
		w := NewWriter(&buf)
		if err := w.Key([]byte("k"), &c.v, 1234567); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(&buf, int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		var keys []Record
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: file: %v", c.name, err)
			}
			if rec.Kind == KindKey {
				keys = append(keys, rec)
			}
		}
		if len(keys) != 1 || canonical(keys[0].Value) != canonical(c.v) || keys[0].Expire != 1234567 {
			t.Errorf("%s: file read back as %+v", c.name, keys)
		}
	}
}

func TestModuleWriteRefused(t *testing.T) {
	for _, v := range []Value{
		{Type: TypeModule, Module: "short"},
		{Type: TypeModule, Module: "AAAAAAAA!"},
		{Type: TypeModule, Module: "AAAAAAAAA", ModuleVersion: 1024},
		{Type: TypeModule, Module: "AAAAAAAAA", ModuleData: []ModuleItem{{Kind: 0}}},
		{Type: TypeModule, Module: "AAAAAAAAA", ModuleData: []ModuleItem{{Kind: 6}}},
	} {
		if _, err := EncodeDump(&v); err == nil {
			t.Errorf("EncodeDump(%+v) wrote it", v)
		}
	}
}

// TestModuleBadPayload: forged module values with a valid trailer are
// malformed (RESTORE's "Bad data format"), not a checksum error, and
// never a panic.
func TestModuleBadPayload(t *testing.T) {
	good, _ := EncodeDump(&moduleCases[2].v)
	body := good[:len(good)-10]
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"id 0", []byte{typeModule2, 0, 0}},
		{"no id", []byte{typeModule2}},
		{"unknown opcode", []byte{typeModule2, 0x81, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"no EOF", body[:len(body)-1]},
		{"cut string", []byte{typeModule2, 0x81, 1, 2, 3, 4, 5, 6, 7, 8, 5, 0x40, 50, 'x'}},
		{"cut double", []byte{typeModule2, 0x81, 1, 2, 3, 4, 5, 6, 7, 8, 4, 1, 2}},
	} {
		p := binary.LittleEndian.AppendUint16(append([]byte(nil), c.body...), Version)
		p = binary.LittleEndian.AppendUint64(p, CRC64(0, p))
		if _, err := DecodeDump(p); err == nil || errors.Is(err, ErrDumpPayload) {
			t.Errorf("%s: DecodeDump = %v, want a format error", c.name, err)
		}
	}
	bad := append([]byte(nil), good...)
	bad[3] ^= 1
	if _, err := DecodeDump(bad); !errors.Is(err, ErrDumpPayload) {
		t.Errorf("flipped byte: %v, want ErrDumpPayload", err)
	}
}

// moduleFile is a file of every module case, a fuzz seed.
func moduleFile(t testing.TB) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i, c := range moduleCases {
		if err := w.Key([]byte{byte('a' + i)}, &c.v, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
