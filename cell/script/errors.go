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

	// FUNCTION LOAD (function.go).
	ErrMissingLibMeta = "ERR Missing library metadata"
	ErrInvalidLibMeta = "ERR Invalid library metadata"
	ErrLibNameTwice   = "ERR Invalid metadata value, name argument was given multiple times"
	ErrLibMetaValue   = "ERR Invalid metadata value given: "
	ErrLibNameMissing = "ERR Library name was not given"
	ErrLibraryName    = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"
	ErrNoFunctions    = "ERR No functions registered"

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

	// redis.register_function (function.go). Redis 7.0.15 words a bad
	// function name as a bad library name.
	msgRegisterOutsideLoad = "redis.register_function can only be called on FUNCTION LOAD command"
	msgRegisterArgs        = "wrong number of arguments to redis.register_function"
	msgRegisterFirstArg    = "first argument to redis.register_function must be a string"
	msgRegisterSecondArg   = "second argument to redis.register_function must be a function"
	msgRegisterTable       = "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
	msgRegisterKey         = "named argument key given to redis.register_function is not a string"
	msgRegisterName        = "function_name argument given to redis.register_function must be a string"
	msgRegisterDesc        = "description argument given to redis.register_function must be a string"
	msgRegisterCallback    = "callback argument given to redis.register_function must be a function"
	msgRegisterFlags       = "flags argument to redis.register_function must be a table representing function flags"
	msgUnknownFlag         = "unknown flag given"
	msgRegisterUnknownArg  = "unknown argument given to redis.register_function"
	msgRegisterNoName      = "redis.register_function must get a function name argument"
	msgRegisterNoCallback  = "redis.register_function must get a callback argument"
	msgFunctionName        = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"
	msgFunctionExists      = "Function already exists in the library"
	msgLoadTimeout         = "FUNCTION LOAD timeout"
)
