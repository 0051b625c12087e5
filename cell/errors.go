package cell

import (
	"errors"
	"strconv"

	"github.com/cellserver/cellserver/resp"
)

// Redis's error replies, defined once. Texts carry their code and no CRLF;
// resp.Writer.Error adds the '-' and the line end.
//
// Names say what a thing is: Err* constants and err*() functions are
// reply texts (strings, for Ctx.Error), Msg* constants are reasons without
// a code (configuration errors), and the few Go error values end in Error
// (BadDirectiveError).
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
	ErrCopyCluster   = "ERR Copying to another database is not allowed in cluster mode"
	ErrMoveCluster   = "ERR MOVE is not allowed in cluster mode"
	ErrLcsNotString  = "ERR The specified keys must contain string values"
	ErrLcsLenAndIdx  = "ERR If you want both the length and indexes, please just use IDX."
	ErrLcsTooLong    = "ERR String too long for LCS"
	ErrLcsMemory     = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
	ErrInt32Range    = "ERR value is out of range, value must between -2147483648 and 2147483647"
	ErrNoProto       = "NOPROTO unsupported protocol version"
	ErrNoPassword    = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	ErrClientName    = "ERR Client names cannot contain spaces, newlines or special characters."
	ErrLoading       = "LOADING Redis is loading the dataset in memory"
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

// Strings and keys.
const (
	ErrInvalidCursor  = "ERR invalid cursor"
	ErrExpireNXCompat = "ERR NX and XX, GT or LT options at the same time are not compatible"
	ErrExpireGTLT     = "ERR GT and LT options at the same time are not compatible"
	ErrLFUIdle        = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	ErrNoLFU          = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
)

// Bitmaps (bitops.c).
const (
	ErrBitOffset        = "ERR bit offset is not an integer or out of range"
	ErrBitValue         = "ERR bit is not an integer or out of range"
	ErrBitposBit        = "ERR The bit argument must be 1 or 0."
	ErrBitopNot         = "ERR BITOP NOT must be called with a single source key."
	ErrBitfieldOverflow = "ERR Invalid OVERFLOW type specified"
	ErrBitfieldType     = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
	ErrBitfieldRO       = "ERR BITFIELD_RO only supports the GET subcommand"
)

// SORT (sort.c).
const (
	ErrSortScore      = "ERR One or more scores can't be converted into double"
	ErrSortByCluster  = "ERR BY option of SORT denied in Cluster mode."
	ErrSortGetCluster = "ERR GET option of SORT denied in Cluster mode."
	ErrSortByACL      = "ERR BY option of SORT denied due to insufficient ACL permissions."
	ErrSortGetACL     = "ERR GET option of SORT denied due to insufficient ACL permissions."
)

// errUnsupportedOption is EXPIRE's reply to an unknown option word, echoed
// as a C string.
func errUnsupportedOption(opt []byte) string {
	return "ERR Unsupported option " + cstring(opt)
}

// Hashes and lists.
const (
	ErrHashNotInt     = "ERR hash value is not an integer"
	ErrHashNotFloat   = "ERR hash value is not a float"
	ErrIncrNaNOrInf   = "ERR value is NaN or Infinity"
	ErrOutOfRange     = "ERR value is out of range"
	ErrMustBePositive = "ERR value is out of range, must be positive"
	ErrLposRankZero   = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	ErrLposCountNeg   = "ERR COUNT can't be negative"
	ErrLposMaxlenNeg  = "ERR MAXLEN can't be negative"
	// ErrCountRange is getRangeLongFromObjectOrReply's text for a count
	// outside [-LONG_MAX, LONG_MAX] (HRANDFIELD), "must between" included.
	ErrCountRange = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	// ErrReplyTooLarge is ours: Redis would try to send a reply of
	// billions of elements (HRANDFIELD h -9223372036854775807) and run out
	// of memory.
	ErrReplyTooLarge = "ERR value is out of range, the reply would be too large"
)

// Server commands.
const (
	ErrInvalidCommand      = "ERR Invalid command specified"
	ErrNoKeyArgs           = "ERR The command has no key arguments"
	ErrInvalidArgCount     = "ERR Invalid number of arguments specified for command"
	ErrInvalidArgs         = "ERR Invalid arguments specified for command"
	ErrNoConfigFile        = "ERR The server is running without a config file"
	ErrInvalidClientID     = "ERR Invalid client ID"
	ErrNoSuchClient        = "ERR No such client"
	ErrClientIDPositive    = "ERR client-id should be greater than 0"
	ErrPauseTimeout        = "ERR timeout is not an integer or out of range"
	ErrPauseNegative       = "ERR timeout is negative"
	ErrPauseMode           = "ERR CLIENT PAUSE mode must be WRITE or ALL"
	ErrUnblockReason       = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
	ErrUnblocked           = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
	ErrTimeoutNotFloat     = "ERR timeout is not a float or out of range"
	ErrTimeoutNegative     = "ERR timeout is negative"
	ErrSwapdbCluster       = "ERR SWAPDB is not allowed in cluster mode"
	ErrSwapdbFirst         = "ERR invalid first DB index"
	ErrSwapdbSecond        = "ERR invalid second DB index"
	ErrCachingNoTracking   = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"
	ErrTrackingUnsupported = "ERR client-side caching (CLIENT TRACKING ON) is not supported by this server"
	ErrFunctionFlushMode   = "ERR FUNCTION FLUSH only supports SYNC|ASYNC option"
	ErrRedirectNoClient    = "ERR The client ID you want redirect to does not exist"
	ErrLibraryNotFound     = "ERR Library not found"
	ErrFunctionNotFound    = "ERR Function not found"
	ErrFunctionNumKeys     = "ERR Bad number of keys provided"
	ErrRestorePolicy       = "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."
	ErrFunctionsPayload    = "ERR failed loading the given functions payload"
	ErrLibraryNameMissing  = "ERR library name argument was not given"
	ErrNoFunctionRunning   = "NOTBUSY No scripts in execution right now."
)

// errConfigUnknown is CONFIG SET's reply to a name it does not know.
func errConfigUnknown(name string) string {
	return "ERR Unknown option or number of arguments for CONFIG SET - '" + name + "'"
}

// errConfigSet is CONFIG SET's refusal of one parameter's value.
func errConfigSet(name, why string) string {
	return "ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + why
}

// errUnknownClientType is CLIENT LIST/KILL's reply to a bad TYPE.
func errUnknownClientType(t string) string {
	return "ERR Unknown client type '" + t + "'"
}

// errNoSuchUser is CLIENT KILL USER's reply for a user that does not exist.
func errNoSuchUser(u string) string {
	return "ERR No such user '" + u + "'"
}

// errFunctionArg is FUNCTION LIST's reply to an argument it does not know.
func errFunctionArg(a string) string {
	return "ERR Unknown argument " + a
}

// ErrSsubscribeDenyBlocking is SSUBSCRIBE inside EXEC.
const ErrSsubscribeDenyBlocking = "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client"

// errSubscribedContext refuses a command to a RESP2 client in pub/sub
// mode; name is the full name ("client|id").
func errSubscribedContext(name string) string {
	return "ERR Can't execute '" + name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
}

// errSubcommandSyntax is the 6.2-style text 7.0 still gives for some
// argument errors inside container commands (FUNCTION FLUSH a b).
func errSubcommandSyntax(parent, sub []byte) string {
	return "ERR unknown subcommand or wrong number of arguments for '" + cstring(sub) + "'. Try " + upper(cstring(parent)) + " HELP."
}

// Observability.
const (
	ErrSlowlogCount        = "ERR count should be greater than or equal to -1"
	ErrMonitorDenyBlocking = "ERR MONITOR isn't allowed for DENY BLOCKING client"
	ErrReplicaKeyspace     = "ERR Replica can't interact with the keyspace"
)

// errLatencyNoSamples is LATENCY GRAPH's reply for an event never seen.
func errLatencyNoSamples(event string) string {
	return "ERR No samples available for event '" + event + "'"
}

// Operations.
const (
	// ErrProtectedMode is Redis 7.0.15's refusal of a remote client in
	// protected mode, word for word ("Setup a an" included).
	ErrProtectedMode  = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."
	ErrOOM            = "OOM command not allowed when used memory > 'maxmemory'."
	ErrNoShutdown     = "ERR No shutdown in progress."
	ErrShutdownFailed = "ERR Errors trying to SHUTDOWN. Check logs."
	// ErrConfigRewritePrefix starts CONFIG REWRITE's failure; the reason
	// (C's strerror) follows.
	ErrConfigRewritePrefix = "ERR Rewriting config file: "

	// The reasons redis-server gives for a configuration line it refuses
	// (FATAL CONFIG FILE ERROR), and for CONFIG SET of these parameters.
	MsgBadDirective      = "Bad directive or wrong number of arguments"
	MsgWrongArgs         = "wrong number of arguments"
	MsgUnbalancedQuotes  = "Unbalanced quotes in configuration line"
	MsgNoSuchRename      = "No such command in rename-command"
	MsgRenameTaken       = "Target command name already exists"
	MsgOutputLimitArgs   = "Wrong number of arguments in buffer limit configuration."
	MsgOutputLimitClass  = "Invalid client class specified in buffer limit configuration."
	MsgOutputLimitNumber = "Error in hard, soft or soft_seconds setting in buffer limit configuration."
	MsgTLSNoCA           = "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!"
	MsgTLSUpdate         = "Unable to update TLS configuration. Check server logs."
	// msgNoKeyspaceEvents: cellserver's own reason, in Redis's CONFIG SET
	// error, for a notify-keyspace-events value that would publish.
	msgNoKeyspaceEvents = "keyspace notifications are not supported (no pub/sub)"
)

// BadDirectiveError is CheckParam's error for a name that is no CONFIG
// parameter.
var BadDirectiveError = errors.New(MsgBadDirective)

// Sorted sets.
const (
	ErrZaddXXNX     = "ERR XX and NX options at the same time are not compatible"
	ErrZaddGTLTNX   = "ERR GT, LT, and/or NX options at the same time are not compatible"
	ErrZaddIncrPair = "ERR INCR option supports a single increment-element pair"
	ErrZsetNaN      = "ERR resulting score is not a number (NaN)"
	// The range parsers' texts live with the parsers in resp.
	ErrMinMaxNotFloat = resp.ErrMinMaxNotFloat
	ErrMinMaxNotLex   = resp.ErrMinMaxNotLex
	ErrLimitNeedsBy   = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	ErrWithScoresLex  = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
	ErrWeightNotFloat = "ERR weight value is not a float"
	ErrLimitNegative  = "ERR LIMIT can't be negative"
	// ZMPOP's range checks (getRangeLongFromObjectOrReply with a message).
	ErrNumkeysPositive = "ERR numkeys should be greater than 0"
	ErrCountPositive   = "ERR count should be greater than 0"
)

// errZsetNoInputKey is ZUNIONSTORE's (and its siblings') reply to a
// numkeys below 1.
func errZsetNoInputKey(name string) string {
	return "ERR at least 1 input key is needed for '" + name + "' command"
}

// Scripting.
const (
	ErrNoScript         = "NOSCRIPT No matching script. Please use EVAL."
	ErrBusy             = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	ErrBusyFunction     = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	ErrNotBusy          = ErrNoFunctionRunning // one text for SCRIPT KILL and FUNCTION KILL
	ErrUnkillable       = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	ErrNumKeysTooMany   = "ERR Number of keys can't be greater than number of args"
	ErrNumKeysNegative  = "ERR Number of keys can't be negative"
	ErrScriptROWrite    = "ERR Can not execute a script with write flag using *_ro command."
	ErrScriptNoCluster  = "ERR Can not run script on cluster, 'no-cluster' flag is set."
	ErrScriptAllowOOM   = "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'"
	ErrScriptFlushMode  = "ERR SCRIPT FLUSH only support SYNC|ASYNC option"
	ErrScriptUnknownCmd = "ERR Unknown Redis command called from script"
	ErrScriptArity      = "ERR Wrong number of args calling Redis command from script"
	ErrScriptNotAllowed = "ERR This Redis command is not allowed from script"
	ErrScriptReadOnly   = "ERR Write commands are not allowed from read-only scripts."
	ErrScriptKilled     = "ERR Script killed by user with SCRIPT KILL..."
	ErrScriptMemory     = "ERR Script stopped: it made the server's memory grow past the script memory limit"
	ErrScriptDebug      = "ERR SCRIPT DEBUG is not supported by this server"
)

// errUndeclaredKey refuses a key a script did not list in KEYS: with
// --lua-allow-undeclared-keys no (strict mode).
func errUndeclaredKey(key []byte) string {
	k := cstring(key)
	if len(k) > 128 {
		k = k[:128]
	}
	return "ERR script tried accessing undeclared key '" + k + "': list every key in KEYS, or start the server with --lua-allow-undeclared-keys yes"
}

// errUndeclaredWholeDB refuses a command that touches every key (DBSIZE,
// FLUSHALL, ...) from a script in strict mode.
func errUndeclaredWholeDB(name string) string {
	return "ERR script tried running '" + name + "', which touches every key of the database: start the server with --lua-allow-undeclared-keys yes"
}

// ErrScriptReach ends a call of a script that reached past its declared
// keys after writing, for a shard held by another script that waits, as
// it did, for one it holds (a cycle: script_shards.go). Redis has no such
// error; declaring every key avoids it.
const ErrScriptReach = "ERR script reached a key outside its declared KEYS after writing, while another script that had done the same held it: list every key in KEYS"

// Cluster.
const (
	ErrClusterDisabled    = "ERR This instance has cluster support disabled"
	ErrCrossSlot          = "CROSSSLOT Keys in request don't hash to the same slot"
	ErrTryAgain           = "TRYAGAIN Multiple keys request during rehashing of slot"
	ErrClusterDown        = "CLUSTERDOWN The cluster is down"
	ErrClusterDownRO      = "CLUSTERDOWN The cluster is down and only accepts read commands"
	ErrSlotUnbound        = "CLUSTERDOWN Hash slot not served"
	ErrSelectCluster      = "ERR SELECT is not allowed in cluster mode"
	ErrInvalidSlot        = "ERR Invalid slot"
	ErrInvalidSlotOrCount = "ERR Invalid slot or number of keys"
	ErrSlotArg            = "ERR Invalid or out of range slot"
	ErrSetSlotSyntax      = "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"
	ErrBusyKey            = "BUSYKEY Target key name already exists."
	ErrDumpPayload        = "ERR DUMP payload version or checksum are wrong"
	ErrBadDataFormat      = "ERR Bad data format"
	ErrMigrateKeysArg     = "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
	ErrMigrateConnect     = "IOERR error or timeout connecting to the client"
	ErrMigrateWrite       = "IOERR error or timeout writing to target instance"
	ErrMigrateRead        = "IOERR error or timeout reading to target instance"
	// ErrDumpType is ours: DUMP of a type our payload format does not carry.
	ErrDumpType        = "ERR DUMP is not supported for this type of value"
	ErrInvalidTTL      = "ERR Invalid TTL value, must be >= 0"
	ErrInvalidIdletime = "ERR Invalid IDLETIME value, must be >= 0"
	ErrInvalidFreq     = "ERR Invalid FREQ value, must be >= 0 and <= 255"
	// ErrScriptNonLocalKey is the start of Redis's error for a script
	// touching a key of a slot this node does not serve.
	ErrScriptNonLocalKey   = "ERR Script attempted to access a non local key in a cluster node"
	ErrScriptClusterDown   = "ERR Script attempted to execute a command while the cluster is down"
	ErrScriptClusterDownRO = "ERR Script attempted to execute a write command while the cluster is down and readonly"
)

// errMoved sends a client to the node serving slot (host:port).
func errMoved(slot int, addr string) string { return "MOVED " + itoa(int64(slot)) + " " + addr }

// errAsk sends a client, for one command, to the node importing slot.
func errAsk(slot int, addr string) string { return "ASK " + itoa(int64(slot)) + " " + addr }

// errUnknownNode is CLUSTER SETSLOT's reply for a node id not in the topology.
func errUnknownNode(id []byte) string { return "ERR I don't know about node " + cstring(id) }

// errSetSlotNodeUnknown is CLUSTER SETSLOT NODE's wording of the same.
func errSetSlotNodeUnknown(id []byte) string { return "ERR Unknown node " + cstring(id) }

// errSlotHasKeys is CLUSTER SETSLOT NODE's refusal to give away a slot
// whose keys are still here.
func errSlotHasKeys(slot int) string {
	return "ERR Can't assign hashslot " + itoa(int64(slot)) + " to a different node while I still hold keys for this hash slot."
}

// errNotSlotOwner is CLUSTER SETSLOT MIGRATING's reply for a slot served elsewhere.
func errNotSlotOwner(slot int) string {
	return "ERR I'm not the owner of hash slot " + itoa(int64(slot))
}

// errAlreadySlotOwner is CLUSTER SETSLOT IMPORTING's reply for a slot served here.
func errAlreadySlotOwner(slot int) string {
	return "ERR I'm already the owner of hash slot " + itoa(int64(slot))
}

// errMigrateTarget is MIGRATE's reply when the target refused a key; msg
// is the target's error without its '-'.
func errMigrateTarget(msg string) string { return "ERR Target instance replied with error: " + msg }

// errReplconfOption is REPLCONF's refusal of an option it does not know.
func errReplconfOption(opt string) string { return "ERR Unrecognized REPLCONF option: " + opt }

// Persistence.
const (
	// misconfPrefix starts Redis's refusal of writes while the append-only
	// file cannot be written; the reason (C's strerror) follows.
	misconfPrefix    = "MISCONF Errors writing to the AOF file: "
	ErrSaveInProg    = "ERR Background save already in progress"
	ErrNoPersistence = "ERR this server keeps no files (made in memory): there is nothing to save"
	// ErrBgsaveMisconf refuses writes after a failed background save with
	// save points set (stop-writes-on-bgsave-error).
	ErrBgsaveMisconf = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. " +
		"Commands that may modify the data set are disabled, because this instance is configured to report errors during writes " +
		"if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."
)

// ErrReadOnlyReplica refuses a write on a replica (replica-read-only).
const ErrReadOnlyReplica = "READONLY You can't write against a read only replica."

// ErrNoMasterLink refuses SYNC/PSYNC on a replica whose own link is not
// up: it has no consistent stream to serve.
const ErrNoMasterLink = "NOMASTERLINK Can't SYNC while not connected with my master"

// ErrNoReplicas refuses a write on a master with fewer good replicas
// than min-replicas-to-write (repl_minreplicas.go).
const ErrNoReplicas = "NOREPLICAS Not enough good replicas to write."

// ErrStaleScriptCall refuses a script's call of a command without the
// stale flag on a replica serving no stale data (an allow-stale script).
const ErrStaleScriptCall = "ERR Can not execute the command on a stale replica"

// ErrMasterDown refuses a command on a replica whose link is down under
// replica-serve-stale-data no.
const ErrMasterDown = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."

// The argument-count errors of CL.THROTTLEALL and CL.PROBEALL, worded like
// CL.THROTTLE's (gcra.MsgUsage); their groups of five take a quantity.
const (
	MsgThrottleAllUsage = "Cell error: Store error: Usage: cl.throttleall <key> <max_burst> <count per period> <period> <quantity> [<key> <max_burst> <count per period> <period> <quantity> ...]"
	MsgProbeAllUsage    = "Cell error: Store error: Usage: cl.probeall <key> <max_burst> <count per period> <period> <quantity> [<key> <max_burst> <count per period> <period> <quantity> ...]"
)

// CL.WINDOW's range errors (ours).
const (
	ErrWindowLimit = "ERR limit must be 0 or more"
	ErrWindowSpan  = "ERR window_ms must be between 1 and 3153600000000"
	ErrWindowCost  = "ERR cost must be 0 or more"
)

// ACL errors (acl_*.go, cmd_acl.go), in Redis 7.0's words.
const (
	ErrNoPermKeys     = "NOPERM this user has no permissions to access one of the keys used as arguments"
	ErrNoPermChannels = "NOPERM this user has no permissions to access one of the channels used as arguments"
	ErrACLNoFile      = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."
	ErrACLSaveFailed  = "ERR There was an error trying to save the ACLs. Please check the server logs for more information"
	ErrACLDelDefault  = "ERR The 'default' user cannot be removed"
	ErrACLUserSpaces  = "ERR Usernames can't contain spaces or null characters"
	ErrACLGenpassBits = "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096"
	// errExecNoPermPrefix starts the reply of a queued command EXEC
	// refuses because the user's rules changed since it was queued.
	errExecNoPermPrefix = "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: "
)

// errNoPerm is dispatch's refusal of a command the user may not run.
func errNoPerm(reason int, cmd string) string {
	switch reason {
	case aclDeniedKey:
		return ErrNoPermKeys
	case aclDeniedChannel:
		return ErrNoPermChannels
	}
	return "NOPERM this user has no permissions to run the '" + cmd + "' command"
}

// errExecNoPerm is EXEC's refusal of a queued command.
func errExecNoPerm(reason int) string {
	switch reason {
	case aclDeniedKey:
		return errExecNoPermPrefix + "no permission to touch the specified keys"
	case aclDeniedChannel:
		return errExecNoPermPrefix + "no permission to access one of the channels used as arguments"
	}
	return errExecNoPermPrefix + "no permission to execute the command or subcommand"
}

// errScriptNoPerm is redis.call's refusal of a command the script's user
// may not run.
func errScriptNoPerm(reason int) string {
	switch reason {
	case aclDeniedKey:
		return "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments"
	case aclDeniedChannel:
		return "ERR The user executing the script can't publish to the channel mentioned in the command"
	}
	return "ERR The user executing the script can't run this command or subcommand"
}

// errACLSetUser is ACL SETUSER's refusal of one rule.
func errACLSetUser(op []byte, err error) string {
	return "ERR Error in ACL SETUSER modifier '" + cstring(op) + "': " + err.Error()
}

// errACLUnmatched is ACL SETUSER's refusal of a selector never closed.
func errACLUnmatched(op []byte) string {
	return "ERR Unmatched parenthesis in acl selector starting at '" + cstring(op) + "'."
}

// Cluster bus mode (cmd_cluster_bus.go).
const ErrFlushSlotsKeys = "ERR DB must be empty to perform CLUSTER FLUSHSLOTS."

// errClusterNeedsBus answers the subcommands that change a cluster when
// the cluster is a fixed topology file.
func errClusterNeedsBus(sub []byte) string {
	return "ERR CLUSTER " + upper(cstring(sub)) + " needs the cluster bus (start without a topology file)"
}

// errSlotRangeOrder is ADDSLOTSRANGE/DELSLOTSRANGE with start > end.
func errSlotRangeOrder(start, end int) string {
	return "ERR start slot number " + strconv.Itoa(start) + " is greater than end slot number " + strconv.Itoa(end)
}

func errMeetPort(p []byte) string    { return "ERR Invalid TCP base port specified: " + cstring(p) }
func errMeetBusPort(p []byte) string { return "ERR Invalid TCP bus port specified: " + cstring(p) }

// FAILOVER's refusals (cmd_failover.go), and PSYNC FAILOVER's on the
// target (repl_failover.go), as Redis 7.0 words them.
const (
	ErrFailoverCluster      = "ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead."
	ErrNoFailover           = "ERR No failover in progress."
	ErrFailoverTimeout      = "ERR FAILOVER timeout must be greater than 0"
	ErrFailoverInProgress   = "ERR FAILOVER already in progress."
	ErrFailoverOnReplica    = "ERR FAILOVER is not valid when server is a replica."
	ErrFailoverNoReplicas   = "ERR FAILOVER requires connected replicas."
	ErrFailoverForce        = "ERR FAILOVER with force option requires both a timeout and target HOST and IP."
	ErrFailoverNotReplica   = "ERR FAILOVER target HOST and PORT is not a replica."
	ErrFailoverNotOnline    = "ERR FAILOVER target replica is not online."
	ErrFailoverToMaster     = "ERR PSYNC FAILOVER can't be sent to a master."
	ErrFailoverReplID       = "ERR PSYNC FAILOVER replid must match my replid."
	ErrSyncFailingOver      = "NOMASTERLINK Can't SYNC while failing over"
	ErrReplicaofFailingOver = "ERR REPLICAOF not allowed while failing over."
)
