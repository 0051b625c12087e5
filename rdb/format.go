package rdb

// The numbers of Redis 7.0's rdb.h: object types (the byte before a key)
// and opcodes (bytes that are not object types).

// Version is the RDB version redis-server 7.0 writes, and the highest a
// DUMP payload may carry to be accepted.
const Version = 10

// maxFileVersion is the highest file version the reader accepts: 11 is
// Redis 7.2's, whose only additions (listpack sets, stream v3) are decoded.
const maxFileVersion = 11

const (
	typeString          = 0
	typeList            = 1
	typeSet             = 2
	typeZSet            = 3 // scores as strings
	typeHash            = 4
	typeZSet2           = 5 // scores as binary doubles
	typeModule          = 6 // pre-4.0 module value: cannot be skipped
	typeModule2         = 7
	typeHashZipmap      = 9
	typeListZiplist     = 10
	typeSetIntset       = 11
	typeZSetZiplist     = 12
	typeHashZiplist     = 13
	typeListQuicklist   = 14
	typeStreamListpacks = 15
	typeHashListpack    = 16
	typeZSetListpack    = 17
	typeListQuicklist2  = 18
	typeStreamListpack2 = 19
	typeSetListpack     = 20
	typeStreamListpack3 = 21

	opFunction2    = 245
	opFunction     = 246 // 7.0 release candidates only; 7.0 refuses it too
	opModuleAux    = 247
	opIdle         = 248
	opFreq         = 249
	opAux          = 250
	opResizeDB     = 251
	opExpireTimeMs = 252
	opExpireTime   = 253
	opSelectDB     = 254
	opEOF          = 255

	// Length encodings: the top two bits of the first byte.
	len6bit  = 0
	len14bit = 1
	len32bit = 0x80
	len64bit = 0x81
	lenEnc   = 3 // the low 6 bits say which special string encoding

	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3

	// Module value opcodes (RDB_MODULE_OPCODE_*).
	modEOF    = 0
	modSInt   = 1
	modUInt   = 2
	modFloat  = 3
	modDouble = 4
	modString = 5

	// Quicklist 2 node containers.
	qlPlain  = 1
	qlPacked = 2
)
