package cell

// Redis's error replies, defined once. Texts carry their code and no CRLF;
// resp.Writer.Error adds the '-' and the line end.
const (
	ErrWrongType     = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrSyntax        = "ERR syntax error"
	ErrNotInteger    = "ERR value is not an integer or out of range"
	ErrNotFloat      = "ERR value is not a valid float"
	ErrNoSuchKey     = "ERR no such key"
	ErrIndexRange    = "ERR index out of range"
	ErrOverflow      = "ERR increment or decrement would overflow"
	ErrDecrOverflow  = "ERR decrement would overflow"
	ErrIncrFloatNaN  = "ERR increment would produce NaN or Infinity"
	ErrNoAuth        = "NOAUTH Authentication required."
	ErrWrongPass     = "WRONGPASS invalid username-password pair or user is disabled."
	ErrDBIndex       = "ERR DB index is out of range"
	ErrExecAbort     = "EXECABORT Transaction discarded because of previous errors."
	ErrMultiNested   = "ERR MULTI calls can not be nested"
	ErrExecNoMulti   = "ERR EXEC without MULTI"
	ErrDiscardNoMult = "ERR DISCARD without MULTI"
	ErrWatchInMulti  = "ERR WATCH inside MULTI is not allowed"
	ErrNoMulti       = "ERR Command not allowed inside a transaction"
	ErrMaxClients    = "ERR max number of clients reached"
	ErrStringTooLong = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	ErrOffsetRange   = "ERR offset is out of range"
	ErrSameObject    = "ERR source and destination objects are the same"
	ErrNoProto       = "NOPROTO unsupported protocol version"
	ErrNoPassword    = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	ErrClientName    = "ERR Client names cannot contain spaces, newlines or special characters."
	ErrHelloNoAuth   = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
)

// MsgProbeUsage is CL.PROBE's argument-count error, worded like
// CL.THROTTLE's (gcra.MsgUsage).
const MsgProbeUsage = "Cell error: Store error: Usage: cl.probe <key> <max_burst> <count per period> <period> [<quantity>]"

// errArity is Redis's wrong-arity text; name is the lower-case full name
// ("zadd", "config|get").
func errArity(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

// errInvalidExpire names the command whose expire time overflowed.
func errInvalidExpire(name string) string {
	return "ERR invalid expire time in '" + name + "' command"
}

// errUnknownSubcommand is the container commands' reply to an unknown
// subcommand: the parent upper-cased, the subcommand as sent.
func errUnknownSubcommand(parent, sub []byte) string {
	s := cstring(sub)
	if len(s) > 128 {
		s = s[:128]
	}
	return "ERR unknown subcommand '" + s + "'. Try " + upper(cstring(parent)) + " HELP."
}

// errUnknownCommand quotes the name and the first arguments as Redis does:
// C strings (cut at NUL), the name cut at 128 bytes, the arguments until
// their quoted text reaches 128 bytes.
func errUnknownCommand(args [][]byte) string {
	name := cstring(args[0])
	if len(name) > 128 {
		name = name[:128]
	}
	var quoted []byte
	for i := 1; i < len(args) && len(quoted) < 128; i++ {
		a := cstring(args[i])
		if room := 128 - len(quoted); len(a) > room {
			a = a[:room]
		}
		quoted = append(quoted, '\'')
		quoted = append(quoted, a...)
		quoted = append(quoted, '\'', ' ')
	}
	return "ERR unknown command '" + name + "', with args beginning with: " + string(quoted)
}

// cstring is b as C code sees it: up to the first NUL.
func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

// Persistence.
const (
	// misconfPrefix starts Redis's refusal of writes while the append-only
	// file cannot be written; the reason (C's strerror) follows.
	misconfPrefix    = "MISCONF Errors writing to the AOF file: "
	ErrSaveInProg    = "ERR Background save already in progress"
	ErrNoPersistence = "ERR persistence is off (appendonly no): there is nothing to save"
)
