package clusterbus

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func name(c byte) string { return strings.Repeat(string(c), NameLen) }

// sampleMessages has one message of every type, bodies filled in.
func sampleMessages() []*Message {
	hdr := Header{Port: 7000, CurrentEpoch: 7, ConfigEpoch: 3, Offset: 1234,
		Sender: name('a'), IP: "127.0.0.1", CPort: 17000, Flags: FlagMaster, MFlags: [3]byte{0, 0, 0}}
	hdr.Slots.Set(0)
	hdr.Slots.Set(5461)
	hdr.Slots.Set(SlotCount - 1)
	with := func(t Type, m Message) *Message {
		m.Header = hdr
		m.Type = t
		return &m
	}
	g := []Gossip{
		{Name: name('b'), PingSent: 1, PongReceived: 2, IP: "10.0.0.2", Port: 7001, CPort: 17001, Flags: FlagMaster | FlagPFail},
		{Name: name('c'), IP: "::1", Port: 7002, CPort: 17002, Flags: FlagReplica, PPort: 6379},
	}
	var upd Slots
	upd.Set(100)
	return []*Message{
		with(Ping, Message{Gossip: g}),
		with(Pong, Message{Gossip: g[:1], Hostname: "node-a.example"}),
		with(Meet, Message{Hostname: "x", Exts: []Ext{{Type: 9, Data: make([]byte, 16)}}}),
		with(Ping, Message{}),
		with(Fail, Message{Node: name('b')}),
		with(Publish, Message{Channel: []byte("news"), Payload: []byte("hello")}),
		with(PublishShard, Message{Channel: []byte("c")}), // an empty payload decodes as nil
		with(FailoverAuthRequest, Message{}),
		with(FailoverAuthAck, Message{}),
		with(MFStart, Message{}),
		with(Update, Message{Node: name('c'), UpdateEpoch: 9, UpdateSlots: upd}),
		with(Module, Message{ModuleID: 42, ModuleType: 3, ModuleData: []byte("abc")}),
	}
}

func TestRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		b := m.Append(nil)
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", m.Type, err)
		}
		if m.Type == Ping || m.Type == Pong || m.Type == Meet {
			m.MFlags[0] |= MFlagExtData // Append announces extensions
		}
		if m.Gossip == nil && got.Gossip != nil && len(got.Gossip) == 0 {
			got.Gossip = nil
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%s: decoded message differs from the one encoded", m.Type)
		}
		if again := got.Append(nil); !bytes.Equal(again, b) {
			t.Errorf("%s: re-encoding differs", m.Type)
		}
	}
}

// TestLayout pins offsets of the header as cluster.h lays it out.
func TestLayout(t *testing.T) {
	m := &Message{Header: Header{Type: Update, Port: 0x0102, CurrentEpoch: 0x0304, Sender: name('s'), ReplicaOf: name('r'), IP: "1.2.3.4", CPort: 0x0506, Flags: 0x0708, State: StateFail}}
	b := m.Append(nil)
	for _, tc := range []struct {
		off  int
		want []byte
	}{
		{0, []byte("RCmb")},
		{4, []byte{0, 0, (HeaderSize + updateSize) >> 8, (HeaderSize + updateSize) & 0xff}},
		{8, []byte{0, 1, 1, 2, 0, byte(Update)}},
		{16, []byte{0, 0, 0, 0, 0, 0, 3, 4}},
		{40, []byte(name('s'))},
		{2128, []byte(name('r'))},
		{2168, []byte("1.2.3.4\x00")},
		{2248, []byte{5, 6, 7, 8, StateFail}},
	} {
		if got := b[tc.off : tc.off+len(tc.want)]; !bytes.Equal(got, tc.want) {
			t.Errorf("offset %d: % x, want % x", tc.off, got, tc.want)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	ping := (&Message{Header: Header{Type: Ping}, Gossip: make([]Gossip, 2)}).Append(nil)
	pub := (&Message{Header: Header{Type: Publish}, Channel: []byte("c"), Payload: []byte("m")}).Append(nil)
	edit := func(b []byte, f func([]byte) []byte) []byte { return f(append([]byte(nil), b...)) }
	for name, b := range map[string][]byte{
		"short":          ping[:100],
		"signature":      edit(ping, func(b []byte) []byte { b[0] = 'X'; return b }),
		"version":        edit(ping, func(b []byte) []byte { b[9] = 2; return b }),
		"totlen":         edit(ping, func(b []byte) []byte { b[7]++; return b }),
		"gossip count":   edit(ping, func(b []byte) []byte { b[15] = 3; return b }),
		"trailing":       edit(ping, func(b []byte) []byte { b = append(b, 0); b[7]++; return b }),
		"publish length": edit(pub, func(b []byte) []byte { b[HeaderSize+3] = 2; return b }),
		"ext count":      edit(ping, func(b []byte) []byte { b[2215] = 1; return b }),
	} {
		if _, err := Decode(b); !errors.Is(err, ErrBadMessage) {
			t.Errorf("%s: err %v, want ErrBadMessage", name, err)
		}
	}
}

func TestRead(t *testing.T) {
	var stream []byte
	msgs := sampleMessages()
	for _, m := range msgs {
		stream = m.Append(stream)
	}
	r := bytes.NewReader(stream)
	var buf []byte
	for _, m := range msgs {
		b, err := Read(r, buf)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
		if err != nil || got.Type != m.Type {
			t.Fatalf("got %v %v, want %s", got, err, m.Type)
		}
		buf = b
	}
	for name, in := range map[string]string{
		"not a bus": "*1\r\n$4\r\nPING\r\n",
		"tiny":      "RCmb\x00\x00\x00\x10",
		"huge":      "RCmb\x7f\x00\x00\x00",
	} {
		if _, err := Read(strings.NewReader(in), nil); !errors.Is(err, ErrBadMessage) {
			t.Errorf("%s: err %v, want ErrBadMessage", name, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, m := range sampleMessages() {
		f.Add(m.Append(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		// What decodes re-encodes to a message that decodes the same.
		again, err := Decode(m.Append(nil))
		if err != nil {
			t.Fatalf("re-encoded message does not decode: %v", err)
		}
		if again.Type != m.Type || len(again.Gossip) != len(m.Gossip) || again.Hostname != m.Hostname {
			t.Fatalf("round trip changed the message")
		}
	})
}
