package serverproc

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listening reports whether process pid, or a child of it (a wrapper
// script's server), holds a TCP socket listening on port (any address). A
// PING that succeeds proves only that something listens there: a port
// picked free can be taken by another program's server before ours binds
// it, and while ours loads its data that server answers for it. known is
// false when /proc cannot tell.
func listening(pid, port int) (yes, known bool) {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if err := listenInodes(table, port, inodes); err != nil {
			return false, false
		}
	}
	if len(inodes) == 0 {
		return false, true
	}
	pids := append([]string{strconv.Itoa(pid)}, children(pid)...)
	for i, p := range pids {
		dir := filepath.Join("/proc", p, "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			if i == 0 {
				return false, false
			}
			continue // a child that has exited
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err != nil {
				continue // closed since the listing
			}
			if inode, ok := strings.CutPrefix(target, "socket:["); ok && inodes[strings.TrimSuffix(inode, "]")] {
				return true, true
			}
		}
	}
	return false, true
}

// children lists the pids of pid's child processes.
func children(pid int) []string {
	var out []string
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		out = append(out, strings.Fields(string(b))...)
	}
	return out
}

// listenInodes adds to inodes those of the sockets in table (the format of
// /proc/net/tcp) that listen on port.
func listenInodes(table string, port int, inodes map[string]bool) error {
	f, err := os.Open(table)
	if os.IsNotExist(err) {
		return nil // no IPv6
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		if p, err := strconv.ParseUint(hexPort, 16, 16); !ok || err != nil || int(p) != port {
			continue
		}
		inodes[fields[9]] = true
	}
	return sc.Err()
}
