package script

// Error texts of the scripting layer, as Redis 7.0 words them. Those with a
// code are whole replies; the others are Lua error messages that the error
// handler prefixes with "ERR " (or a position) like any script error.
const (
	ErrInvalidShebang       = "ERR Invalid script shebang"
	ErrInvalidEngine        = "ERR Invalid engine in script shebang"
	ErrUnexpectedEngine     = "ERR Unexpected engine in script shebang: "
	ErrUnknownShebangOption = "ERR Unknown lua shebang option: "
	ErrUnexpectedFlag       = "ERR Unexpected flag in script shebang: "
	ErrCompilePrefix        = "ERR Error compiling script (new function): "

	msgReadonlyTable   = "Attempt to modify a readonly table"
	msgNoGlobal        = "Script attempted to access nonexistent global variable '"
	msgArgsType        = "Lua redis lib command arguments must be strings or integers"
	msgNoArgs          = "Please specify at least one argument for this redis lib call"
	msgCallOutside     = "redis.call/pcall can only be called inside a script invocation"
	msgRandomOutside   = "math.random can only be called inside a script invocation"
	msgWrongArgs       = "wrong number of arguments"
	msgWrongArgsOrType = "wrong number or type of arguments"
	msgLogArgs         = "redis.log() requires two arguments or more."
	msgLogLevelType    = "First argument must be a number (log level)."
	msgLogLevel        = "Invalid debug level."
	msgSetrespArgs     = "redis.setresp() requires one argument."
	msgSetrespVersion  = "RESP version must be 2 or 3."
	msgSetReplArgs     = "redis.set_repl() requires one argument."
	msgSetReplFlags    = "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."
	msgACLCommand      = "Invalid command passed to redis.acl_check_cmd()"
	msgStackLimit      = "reached lua stack limit"
	msgBadErrorObject  = "ERR Error running script: the error object has no 'err' string"
)
