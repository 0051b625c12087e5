package cell

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Where users come from and go to, as in Redis 7.0: `user` lines of the
// configuration file (Config.Users), or an ACL file (aclfile) that ACL
// LOAD reads and ACL SAVE writes, never both. Without an ACL file, CONFIG
// REWRITE writes the users as `user` lines.

// CheckUserLine validates a configuration file's `user name rule...`
// line (its words after "user") as Redis does when it reads the file.
func CheckUserLine(args []string) error {
	if len(args) < 1 {
		return errors.New(MsgWrongArgs)
	}
	words := make([][]byte, len(args)-1)
	for i, a := range args[1:] {
		words[i] = []byte(a)
	}
	ops, open := mergeSelectorArgs(words)
	if open >= 0 {
		return fmt.Errorf("Error in user declaration '%s': Unmatched parenthesis in selector definition.", args[1+open])
	}
	r := newRules(false)
	for _, op := range ops {
		if err := r.apply(op, false); err != nil {
			return fmt.Errorf("Error in user declaration '%s': %s", op, err)
		}
	}
	return nil
}

// loadUsersAtStartup applies the configuration's users, then the ACL
// file's, refusing a configuration with both (Redis's
// ACLLoadUsersAtStartup).
func (s *Server) loadUsersAtStartup() error {
	file := s.configValue("aclfile")
	if file != "" && len(s.cfg.Users) > 0 {
		return errors.New("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.")
	}
	users := s.acl.users.Load()
	pubsubAll := s.acl.pubsubAll.Load()
	seen := map[string]bool{}
	for _, line := range s.cfg.Users {
		if len(line) == 0 {
			continue
		}
		name := line[0]
		if seen[name] {
			return fmt.Errorf("Error in user declaration '%s': %s", name, errACLDuplicate)
		}
		seen[name] = true
		if hasSpaces([]byte(name)) {
			return errors.New("Spaces not allowed in ACL usernames")
		}
		words := make([][]byte, len(line)-1)
		for i, a := range line[1:] {
			words[i] = []byte(a)
		}
		ops, open := mergeSelectorArgs(words)
		if open >= 0 {
			return fmt.Errorf("Error in user declaration '%s': Unmatched parenthesis in selector definition.", line[1+open])
		}
		u := users.get(name)
		r := newRules(pubsubAll)
		if u != nil { // the default user: reset, then the line's rules
			r = u.rules.Load().clone()
			r.apply([]byte("reset"), pubsubAll)
		}
		for _, op := range ops {
			if err := r.apply(op, pubsubAll); err != nil {
				return fmt.Errorf("Error loading ACL rule '%s' for the user named '%s': %s", op, name, err)
			}
		}
		if u == nil {
			u = &aclUser{name: name}
			users.add(u)
		}
		u.set(r)
	}
	if file != "" {
		if msg := s.loadACLFile(file); msg != "" {
			return errors.New("Aborting Redis startup because of ACL errors: " + msg)
		}
	}
	return nil
}

// loadACLFile replaces the users with the file's, all or nothing (Redis's
// ACLLoadFromFile). It returns "" or Redis's description of every error.
// The default user keeps its identity: its connections stay, with the
// file's rules.
func (s *Server) loadACLFile(path string) string {
	data, err := os.ReadFile(s.inDir(path))
	if err != nil {
		return fmt.Sprintf("Error loading ACLs, opening file '%s': %s", path, errnoText(err))
	}
	pubsubAll := s.acl.pubsubAll.Load()
	name := s.configValue("aclfile")
	var errs strings.Builder
	fresh := map[string]*aclRules{}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		var argv []string
		for _, w := range strings.Split(line, " ") {
			argv = append(argv, w)
		}
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", name, n)
			continue
		}
		if hasSpaces([]byte(argv[1])) {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", name, n, argv[1])
			continue
		}
		if fresh[argv[1]] != nil {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], n)
			continue
		}
		r := newRules(pubsubAll)
		fresh[argv[1]] = r
		words := make([][]byte, len(argv)-2)
		for j, a := range argv[2:] {
			words[j] = []byte(a)
		}
		ops, open := mergeSelectorArgs(words)
		if open >= 0 {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", name, n)
		}
		for _, op := range ops {
			op = []byte(strings.Trim(string(op), "\t\r\n"))
			if err := r.apply(op, pubsubAll); err != nil {
				if err == errACLUnknown {
					// A command name is no secret: Redis names the rule.
					fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", name, n, op, err)
				} else {
					fmt.Fprintf(&errs, "%s:%d: %s. ", name, n, err)
				}
			}
		}
	}
	if errs.Len() > 0 {
		return errs.String() + "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	}
	a := &s.acl
	old := a.users.Load()
	def := old.def
	next := &aclUsers{users: map[string]*aclUser{"default": def}, def: def}
	if r := fresh["default"]; r != nil {
		def.set(r)
	} else {
		def.set(defaultRules())
	}
	for n, r := range fresh {
		if n == "default" {
			continue
		}
		u := &aclUser{name: n}
		u.set(r)
		next.users[n] = u
	}
	a.users.Store(next)
	var gone []*aclUser
	for n, u := range old.users {
		if n != "default" {
			gone = append(gone, u)
		}
	}
	for _, u := range gone {
		u.gone.Store(true)
	}
	return ""
}

// saveACLFile writes every user to path, through a temporary file renamed
// over it (Redis's ACLSaveToFile).
func (s *Server) saveACLFile(path string) error {
	path = s.inDir(path)
	var b strings.Builder
	for _, u := range s.acl.users.Load().sorted() {
		b.WriteString(u.line())
		b.WriteByte('\n')
	}
	tmp := path + ".tmp-" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// inDir is where a file the configuration names is: Redis changes to
// dir as it reads its configuration, so a relative name is in dir,
// whatever directory the server was started in.
func (s *Server) inDir(name string) string {
	if filepath.IsAbs(name) || s.cfg.Dir == "" {
		return name
	}
	return filepath.Join(s.cfg.Dir, name)
}

// userLines are the users as CONFIG REWRITE writes them, when there is
// no ACL file.
func (s *Server) userLines() []string {
	if s.configValue("aclfile") != "" {
		return nil
	}
	var out []string
	for _, u := range s.acl.users.Load().sorted() {
		out = append(out, u.line())
	}
	return out
}

func aclLoad(x *Ctx) {
	file := x.srv.configValue("aclfile")
	if file == "" {
		x.Error(ErrACLNoFile)
		return
	}
	x.srv.acl.mu.Lock()
	msg := x.srv.loadACLFile(file)
	x.srv.acl.mu.Unlock()
	if msg != "" {
		x.Error("ERR " + msg)
		return
	}
	x.srv.closeGoneUsers(x)
	x.W.OK()
}

func aclSave(x *Ctx) {
	file := x.srv.configValue("aclfile")
	if file == "" {
		x.Error(ErrACLNoFile)
		return
	}
	if err := x.srv.saveACLFile(file); err != nil {
		x.srv.log.Warn("ACL SAVE failed", "file", file, "err", err)
		x.Error(ErrACLSaveFailed)
		return
	}
	x.W.OK()
}

// closeGoneUsers closes the connections of users ACL LOAD removed.
func (s *Server) closeGoneUsers(x *Ctx) {
	for _, c := range s.clientsByID() {
		if u := c.shared.user.Load(); u != nil && u.gone.Load() {
			x.kill(c)
		}
	}
}

// setDefaultPassword is requirepass: the default user's only password,
// or no password at all when empty (Redis's ACLUpdateDefaultUserPassword).
func (s *Server) setDefaultPassword(pass string) {
	a := &s.acl
	a.mu.Lock()
	defer a.mu.Unlock()
	u := a.users.Load().def
	r := u.rules.Load().clone()
	r.apply([]byte("resetpass"), false)
	if pass != "" {
		r.apply(append([]byte{'>'}, pass...), false)
	} else {
		r.apply([]byte("nopass"), false)
	}
	u.set(r)
}

func init() {
	// acllog-max-len and acl-pubsub-default are in CONFIG's table
	// (cmd_config.go); here they are made live.
	p := configParamByName("acllog-max-len")
	p.get = func(s *Server) string { return itoa(s.acl.log.max.Load()) }
	p.apply = func(s *Server, v string) string {
		n, _ := strconv.ParseInt(v, 10, 64)
		s.acl.log.max.Store(n) // the log is trimmed at its next entry, as in Redis
		return ""
	}
	p = configParamByName("acl-pubsub-default")
	p.get = func(s *Server) string {
		if s.acl.pubsubAll.Load() {
			return "allchannels"
		}
		return "resetchannels"
	}
	p.apply = func(s *Server, v string) string {
		s.acl.pubsubAll.Store(v == "allchannels")
		return ""
	}
}
