package cell

import (
	"errors"
	"strings"
)

// rename-command: the command table a server looks names up in.

// CheckRenames validates rename-command pairs, applied in order, with
// Redis's texts.
func CheckRenames(pairs [][2]string) error {
	_, err := renamedTable(pairs)
	return err
}

// renamedTable copies the command table with each pair applied in order:
// the command leaves its old name and, unless the new one is "", takes
// the new. Subcommands follow their container.
//
// Unlike Redis, disabling a command the server does not have
// (rename-command DEBUG "", common in hardened redis.conf files) is
// accepted: it is already unavailable. Renaming one to a new name is
// refused with Redis's error.
func renamedTable(pairs [][2]string) (map[string]*Command, error) {
	t := make(map[string]*Command, len(commands))
	for k, v := range commands {
		t[k] = v
	}
	for _, p := range pairs {
		from, to := strings.ToLower(p[0]), strings.ToLower(p[1])
		cmd, ok := t[from]
		if !ok && to == "" {
			continue
		}
		if !ok {
			return nil, errors.New(MsgNoSuchRename)
		}
		if to != "" {
			if _, taken := t[to]; taken {
				return nil, errors.New(MsgRenameTaken)
			}
		}
		delete(t, from)
		if to != "" {
			t[to] = cmd
		}
	}
	return t, nil
}

// lookupCommand finds a top-level command by the name clients call it,
// rename-command applied.
func (s *Server) lookupCommand(name []byte) *Command {
	if s.ops.commands == nil {
		return lookupCommand(commands, name)
	}
	if len(name) > 64 {
		return nil
	}
	return s.ops.commands[strings.ToLower(string(name))]
}
