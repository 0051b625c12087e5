package clusterbus

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The wire format of Redis 7.0's cluster bus (cluster.h: clusterMsg and
// the bodies of its union). Every integer is big-endian. A message is a
// fixed 2256-byte header followed by a body whose length depends on the
// type; totlen (the second field) counts both, so a reader takes 8 bytes,
// learns the length, then takes the rest.

// Sizes of the fixed parts of a message.
const (
	HeaderSize = 2256 // the header, before the body
	NameLen    = 40   // a node name: 40 hex characters
	IPLen      = 46   // INET6_ADDRSTRLEN: an address, NUL-terminated
	GossipSize = 104  // one gossip section of PING/PONG/MEET
	updateSize = 8 + NameLen + SlotCount/8
	failSize   = NameLen
	publishFix = 8  // channel_len and message_len
	moduleFix  = 13 // module_id, len, type
	extHdrSize = 8  // length, type, 2 bytes of padding

	// MaxMessage bounds totlen: a header claiming more closes the link
	// instead of allocating it (Redis has no bound but memory; a PUBLISH
	// bigger than this is not carried by this bus).
	MaxMessage = 64 << 20
)

// SlotCount is the number of hash slots.
const SlotCount = 16384

// Version is the only protocol version Redis 7.0 speaks.
const Version = 1

var signature = [4]byte{'R', 'C', 'm', 'b'}

// Type is a message type (CLUSTERMSG_TYPE_*).
type Type uint16

// Message types, in Redis's numbering.
const (
	Ping Type = iota
	Pong
	Meet
	Fail
	Publish
	FailoverAuthRequest
	FailoverAuthAck
	Update
	MFStart
	Module
	PublishShard
	TypeCount // number of known types: per-type counters size by it
)

var typeNames = [...]string{"ping", "pong", "meet", "fail", "publish", "auth-req", "auth-ack", "update", "mfstart", "module", "publishshard"}

// String is the name CLUSTER INFO prints in cluster_stats_messages_<name>_sent.
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("type%d", uint16(t))
}

// Node flags, in the header (the sender's) and in gossip sections.
const (
	FlagMaster     = 1 << 0
	FlagReplica    = 1 << 1
	FlagPFail      = 1 << 2
	FlagFail       = 1 << 3
	FlagMyself     = 1 << 4
	FlagHandshake  = 1 << 5
	FlagNoAddr     = 1 << 6
	FlagMeet       = 1 << 7
	FlagMigrateTo  = 1 << 8
	FlagNoFailover = 1 << 9
)

// Message flags, in MFlags[0].
const (
	MFlagPaused   = 1 << 0 // the master is paused for a manual failover
	MFlagForceAck = 1 << 1 // give a failover vote even to a master not failed
	MFlagExtData  = 1 << 2 // PING/PONG/MEET carry extensions after the gossip
)

// Cluster states as the header's State carries them.
const (
	StateOK   = 0
	StateFail = 1
)

// Extension types of PING/PONG/MEET known to Redis 7.0.
const ExtHostname = 0

// Slots is a slot bitmap, bit s of byte s/8 counting from the low bit, as
// Redis's bitmapTestBit.
type Slots [SlotCount / 8]byte

// Has reports whether slot s is set.
func (b *Slots) Has(s int) bool { return b[s>>3]&(1<<(s&7)) != 0 }

// Set sets slot s.
func (b *Slots) Set(s int) { b[s>>3] |= 1 << (s & 7) }

// Clear clears slot s.
func (b *Slots) Clear(s int) { b[s>>3] &^= 1 << (s & 7) }

// Count is the number of slots set.
func (b *Slots) Count() int {
	n := 0
	for _, c := range b {
		for ; c != 0; c &= c - 1 {
			n++
		}
	}
	return n
}

// Header is the fixed part of every message: who sends it and how that
// node sees itself.
type Header struct {
	Type         Type
	Port         uint16 // the sender's client port
	CurrentEpoch uint64
	ConfigEpoch  uint64 // a master's own; a replica's master's
	Offset       uint64 // replication offset
	Sender       string // 40 characters
	Slots        Slots  // the slots the sender (or its master) serves
	ReplicaOf    string // its master's name, "" for a master
	IP           string // "" lets the receiver use the connection's address
	PPort        uint16 // plaintext port when Port is TLS, else 0
	CPort        uint16 // the sender's bus port
	Flags        uint16
	State        uint8
	MFlags       [3]byte
}

// Gossip is what a PING/PONG/MEET tells about one other node.
type Gossip struct {
	Name         string
	PingSent     uint32 // seconds, 0 when no ping is pending
	PongReceived uint32 // seconds
	IP           string
	Port         uint16
	CPort        uint16
	Flags        uint16
	PPort        uint16
}

// Ext is an extension of PING/PONG/MEET this package does not interpret.
type Ext struct {
	Type uint16
	Data []byte // padding included
}

// Message is one bus message. Which body fields mean something depends on
// Type; the others stay zero.
type Message struct {
	Header
	// PING, PONG, MEET.
	Gossip   []Gossip
	Hostname string // the hostname extension, "" when absent
	Exts     []Ext  // other extensions, kept so that a decode/encode round trips
	// FAIL: the node now failed. UPDATE: the node whose slots these are.
	Node string
	// PUBLISH, PUBLISHSHARD.
	Channel, Payload []byte
	// UPDATE.
	UpdateEpoch uint64
	UpdateSlots Slots
	// MODULE.
	ModuleID   uint64
	ModuleType uint8
	ModuleData []byte
}

// ErrBadMessage is any message that is not Redis's format: the link that
// sent it is closed.
var ErrBadMessage = errors.New("clusterbus: malformed message")

func bad(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBadMessage, fmt.Sprintf(format, a...))
}

// Append encodes m after dst.
func (m *Message) Append(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	h := dst[start:]
	copy(h[0:4], signature[:])
	be := binary.BigEndian
	be.PutUint16(h[8:], Version)
	be.PutUint16(h[10:], m.Port)
	be.PutUint16(h[12:], uint16(m.Type))
	be.PutUint64(h[16:], m.CurrentEpoch)
	be.PutUint64(h[24:], m.ConfigEpoch)
	be.PutUint64(h[32:], m.Offset)
	copy(h[40:80], m.Sender)
	copy(h[80:2128], m.Slots[:])
	copy(h[2128:2168], m.ReplicaOf)
	copy(h[2168:2168+IPLen-1], m.IP)
	be.PutUint16(h[2246:], m.PPort)
	be.PutUint16(h[2248:], m.CPort)
	be.PutUint16(h[2250:], m.Flags)
	h[2252] = m.State
	copy(h[2253:2256], m.MFlags[:])
	switch m.Type {
	case Ping, Pong, Meet:
		be.PutUint16(h[14:], uint16(len(m.Gossip)))
		for i := range m.Gossip {
			dst = m.Gossip[i].append(dst)
		}
		n := 0
		if m.Hostname != "" {
			dst = appendExt(dst, ExtHostname, append([]byte(m.Hostname), 0))
			n++
		}
		for _, e := range m.Exts {
			dst = appendExt(dst, e.Type, e.Data)
			n++
		}
		h = dst[start:]
		be.PutUint16(h[2214:], uint16(n))
		h[2253] |= MFlagExtData
	case Fail:
		dst = appendName(dst, m.Node)
	case Publish, PublishShard:
		dst = be.AppendUint32(dst, uint32(len(m.Channel)))
		dst = be.AppendUint32(dst, uint32(len(m.Payload)))
		dst = append(dst, m.Channel...)
		dst = append(dst, m.Payload...)
	case Update:
		dst = be.AppendUint64(dst, m.UpdateEpoch)
		dst = appendName(dst, m.Node)
		dst = append(dst, m.UpdateSlots[:]...)
	case Module:
		dst = be.AppendUint64(dst, m.ModuleID)
		dst = be.AppendUint32(dst, uint32(len(m.ModuleData)))
		dst = append(dst, m.ModuleType)
		dst = append(dst, m.ModuleData...)
	}
	be.PutUint32(dst[start+4:], uint32(len(dst)-start))
	return dst
}

func appendName(dst []byte, name string) []byte {
	var b [NameLen]byte
	copy(b[:], name)
	return append(dst, b[:]...)
}

func (g *Gossip) append(dst []byte) []byte {
	var b [GossipSize]byte
	be := binary.BigEndian
	copy(b[0:40], g.Name)
	be.PutUint32(b[40:], g.PingSent)
	be.PutUint32(b[44:], g.PongReceived)
	copy(b[48:48+IPLen-1], g.IP)
	be.PutUint16(b[94:], g.Port)
	be.PutUint16(b[96:], g.CPort)
	be.PutUint16(b[98:], g.Flags)
	be.PutUint16(b[100:], g.PPort)
	return append(dst, b[:]...)
}

// appendExt writes one extension, its data padded to 8 bytes.
func appendExt(dst []byte, typ uint16, data []byte) []byte {
	padded := (len(data) + 7) &^ 7
	dst = binary.BigEndian.AppendUint32(dst, uint32(extHdrSize+padded))
	dst = binary.BigEndian.AppendUint16(dst, typ)
	dst = append(dst, 0, 0)
	dst = append(dst, data...)
	return append(dst, make([]byte, padded-len(data))...)
}

// cstring reads a NUL-terminated string from a fixed field.
func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// Decode reads one whole message (totlen bytes). It checks what Redis's
// clusterProcessPacket checks: signature, version, and that totlen is
// exactly what the type and its counts say. Types it does not know decode
// as a bare header, as Redis lets them pass unread.
func Decode(b []byte) (*Message, error) {
	if len(b) < HeaderSize {
		return nil, bad("%d bytes, shorter than a header", len(b))
	}
	be := binary.BigEndian
	if [4]byte(b[0:4]) != signature {
		return nil, bad("signature %q", b[0:4])
	}
	if tot := be.Uint32(b[4:]); int(tot) != len(b) {
		return nil, bad("totlen %d for %d bytes", tot, len(b))
	}
	if v := be.Uint16(b[8:]); v != Version {
		return nil, bad("version %d", v)
	}
	m := &Message{}
	m.Type = Type(be.Uint16(b[12:]))
	m.Port = be.Uint16(b[10:])
	count := int(be.Uint16(b[14:]))
	m.CurrentEpoch = be.Uint64(b[16:])
	m.ConfigEpoch = be.Uint64(b[24:])
	m.Offset = be.Uint64(b[32:])
	m.Sender = string(b[40:80])
	copy(m.Slots[:], b[80:2128])
	if r := b[2128:2168]; r[0] != 0 {
		m.ReplicaOf = string(r)
	}
	m.IP = cstring(b[2168 : 2168+IPLen])
	exts := int(be.Uint16(b[2214:]))
	m.PPort = be.Uint16(b[2246:])
	m.CPort = be.Uint16(b[2248:])
	m.Flags = be.Uint16(b[2250:])
	m.State = b[2252]
	copy(m.MFlags[:], b[2253:2256])
	body := b[HeaderSize:]
	switch m.Type {
	case Ping, Pong, Meet:
		if len(body) < count*GossipSize {
			return nil, bad("%d gossip sections in %d bytes", count, len(body))
		}
		m.Gossip = make([]Gossip, count)
		for i := range m.Gossip {
			m.Gossip[i] = decodeGossip(body[i*GossipSize:])
		}
		body = body[count*GossipSize:]
		if m.MFlags[0]&MFlagExtData == 0 {
			exts = 0
		}
		for ; exts > 0; exts-- {
			if len(body) < extHdrSize {
				return nil, bad("extension header past the end")
			}
			n := be.Uint32(body)
			if n%8 != 0 || n < extHdrSize || uint64(n) > uint64(len(body)) {
				return nil, bad("extension of length %d in %d bytes", n, len(body))
			}
			typ, data := be.Uint16(body[4:]), body[extHdrSize:n]
			if typ == ExtHostname {
				m.Hostname = cstring(data)
			} else {
				m.Exts = append(m.Exts, Ext{Type: typ, Data: append([]byte(nil), data...)})
			}
			body = body[n:]
		}
		if len(body) != 0 {
			return nil, bad("%d bytes after the gossip and extensions", len(body))
		}
	case Fail:
		if len(body) != failSize {
			return nil, bad("FAIL body of %d bytes", len(body))
		}
		m.Node = string(body)
	case Publish, PublishShard:
		if len(body) < publishFix {
			return nil, bad("PUBLISH body of %d bytes", len(body))
		}
		cl, ml := uint64(be.Uint32(body)), uint64(be.Uint32(body[4:]))
		if cl+ml != uint64(len(body)-publishFix) {
			return nil, bad("PUBLISH lengths %d+%d in %d bytes", cl, ml, len(body)-publishFix)
		}
		m.Channel = append([]byte(nil), body[publishFix:publishFix+cl]...)
		m.Payload = append([]byte(nil), body[publishFix+cl:]...)
	case FailoverAuthRequest, FailoverAuthAck, MFStart:
		if len(body) != 0 {
			return nil, bad("%s with a %d-byte body", m.Type, len(body))
		}
	case Update:
		if len(body) != updateSize {
			return nil, bad("UPDATE body of %d bytes", len(body))
		}
		m.UpdateEpoch = be.Uint64(body)
		m.Node = string(body[8:48])
		copy(m.UpdateSlots[:], body[48:])
	case Module:
		if len(body) < moduleFix {
			return nil, bad("MODULE body of %d bytes", len(body))
		}
		if n := be.Uint32(body[8:]); uint64(n) != uint64(len(body)-moduleFix) {
			return nil, bad("MODULE length %d in %d bytes", n, len(body)-moduleFix)
		}
		m.ModuleID = be.Uint64(body)
		m.ModuleType = body[12]
		m.ModuleData = append([]byte(nil), body[moduleFix:]...)
	}
	return m, nil
}

func decodeGossip(b []byte) Gossip {
	be := binary.BigEndian
	return Gossip{
		Name:         string(b[0:40]),
		PingSent:     be.Uint32(b[40:]),
		PongReceived: be.Uint32(b[44:]),
		IP:           cstring(b[48 : 48+IPLen]),
		Port:         be.Uint16(b[94:]),
		CPort:        be.Uint16(b[96:]),
		Flags:        be.Uint16(b[98:]),
		PPort:        be.Uint16(b[100:]),
	}
}

// Read reads one message from r into buf (grown as needed) and returns its
// bytes. A stream that does not start with "RCmb", or whose totlen is
// below a header or above MaxMessage, is not a cluster bus: ErrBadMessage,
// and the caller closes the link, as Redis's clusterReadHandler frees it.
func Read(r io.Reader, buf []byte) ([]byte, error) {
	if cap(buf) < 8 {
		buf = make([]byte, 0, HeaderSize)
	}
	buf = buf[:8]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	if [4]byte(buf[0:4]) != signature {
		return nil, bad("signature %q", buf[0:4])
	}
	tot := binary.BigEndian.Uint32(buf[4:])
	if tot < HeaderSize || tot > MaxMessage {
		return nil, bad("totlen %d", tot)
	}
	if cap(buf) < int(tot) {
		nb := make([]byte, tot)
		copy(nb, buf)
		buf = nb
	}
	buf = buf[:tot]
	if _, err := io.ReadFull(r, buf[8:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}
