package cell

import (
	"strings"

	"github.com/cellserver/cellserver/cell/script"
)

// The flags a script declares (#!lua flags=..., or a function's
// register_function flags) stand in for its command's own in the checks
// made before it runs, as Redis's evalGetCommandFlags and
// fcallGetCommandFlags make them (scriptFlagsToCmdFlags): it writes
// unless no-writes, is deny-oom unless allow-oom or no-writes, and runs on
// a stale replica only with allow-stale. A script without a shebang keeps
// EVAL's flags, but never runs stale. Then, as it starts, the checks of
// scriptPrepareForRun (scriptPrepare); and inside, each command it calls
// passes scriptVerifyOOM (scriptOOMDenied).

// scriptCmdFlags are cmd's flags for the checks before it runs: for an
// EVAL or FCALL, as its script's flags make them.
func (c *Client) scriptCmdFlags(cmd *Command, args [][]byte) Flag {
	if cmd.Flags&flagScript == 0 || len(args) < 2 {
		return cmd.Flags
	}
	flags, ok := c.srv.declaredFlags(cmd, args[1])
	switch {
	case !ok:
		return cmd.Flags // an unknown EVALSHA or function: its own
	case flags&script.FlagCompat != 0:
		return cmd.Flags &^ FlagStale
	}
	f := cmd.Flags &^ (FlagStale | FlagDenyOOM | FlagWrite)
	if flags&(script.FlagAllowOOM|script.FlagNoWrites) == 0 {
		f |= FlagDenyOOM
	}
	if flags&script.FlagNoWrites == 0 {
		f |= FlagWrite
	}
	if flags&script.FlagAllowStale != 0 {
		f |= FlagStale
	}
	return f
}

// declaredFlags are the flags of the script or function an EVAL, EVALSHA
// or FCALL names (arg: its body, SHA or function name); false: none known
// (an unknown SHA or function, a shebang that does not parse).
func (s *Server) declaredFlags(cmd *Command, arg []byte) (script.Flags, bool) {
	switch {
	case strings.HasPrefix(cmd.Name, "evalsha"):
		if sc := s.scripts.Lookup(arg); sc != nil {
			return sc.Flags, true
		}
		return 0, false
	case strings.HasPrefix(cmd.Name, "fcall"):
		if f := s.functions.lookup(arg); f != nil {
			return f.Flags, true
		}
		return 0, false
	}
	return script.FlagsOf(arg)
}

// scriptPrepare refuses a script or function with flags from running, as
// Redis does before it runs one: what its flags make a write command is
// refused on a read-only replica and without enough good replicas
// (processCommand's checks), then scriptPrepareForRun's in its order
// (no-cluster, allow-oom, the *_RO commands). false: refused, the error
// written.
func scriptPrepare(x *Ctx, flags script.Flags, ro bool) bool {
	if flags&script.FlagCompat != 0 {
		return true
	}
	noWrites := flags&script.FlagNoWrites != 0
	var msg string
	switch {
	case !noWrites && x.cl.readOnlyReplica():
		msg = ErrReadOnlyReplica
	case !noWrites && x.srv.tooFewReplicas():
		msg = ErrNoReplicas
	case flags&script.FlagNoCluster != 0 && x.srv.clusterOn:
		msg = ErrScriptNoCluster
	case flags&(script.FlagAllowOOM|script.FlagNoWrites) == 0 && x.cl.scriptOOM && x.srv.ops.mem.limit.Load() > 0:
		msg = ErrScriptAllowOOM
	case !noWrites && ro:
		msg = ErrScriptROWrite
	default:
		return true
	}
	x.Error(msg)
	return false
}

// scriptOOMDenied is Redis's scriptVerifyOOM for a command r's script
// calls: with memory over maxmemory when the script started, its first
// deny-oom command is refused, unless it declared allow-oom or already
// wrote (it cannot stop halfway), or this is a replica (it must apply its
// master's scripts).
func (r *scriptRun) scriptOOMDenied(cmd *Command) bool {
	if !scriptOOMRefused(r.x, cmd, r.allowOOM) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.wrote
}

// scriptOOMRefused is scriptOOMDenied for a script that has not written.
func scriptOOMRefused(x *Ctx, cmd *Command, allowOOM bool) bool {
	return !allowOOM && cmd.Flags&FlagDenyOOM != 0 && x.cl.scriptOOM &&
		x.srv.ops.mem.limit.Load() != 0 && !x.srv.isReplica()
}
