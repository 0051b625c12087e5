package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// cellserver migrate moves hash slots, with their keys, from one running
// node to another, as redis-cli --cluster reshard does for Redis, without a
// cluster bus:
//
//  1. target: CLUSTER SETSLOT s IMPORTING <source id>
//  2. source: CLUSTER SETSLOT s MIGRATING <target id>. From here the source
//     serves the slot's keys it still has and answers -ASK (to the target)
//     for the others; the target serves those for clients that send ASKING.
//  3. the keys CLUSTER GETKEYSINSLOT lists on the source are moved in
//     batches by MIGRATE on the source, which holds them locked while the
//     target restores them and deletes them only then: no client write is
//     lost, and until a key is moved clients keep using the source's copy.
//  4. CLUSTER SETSLOT s NODE <target id> on the target, the source and every
//     other node the source's CLUSTER NODES lists.
//
// The topology files are not rewritten: the tool prints the new CLUSTER
// NODES, which is the file's format, to install before the next restart.

func runMigrate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cellserver migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "source node, host:port")
	to := fs.String("to", "", "target node, host:port")
	slots := fs.String("slots", "", "slots to move: 5,10-20,...")
	pass := fs.String("password", "", "AUTH password of the nodes")
	batch := fs.Int("batch", 100, "keys moved per MIGRATE")
	timeout := fs.Int("timeout", 5000, "MIGRATE timeout in ms")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: cellserver migrate --from host:port --to host:port --slots 0-99,200\n\n"+
			"Moves the slots and their keys (values, TTLs, CL.THROTTLE state) between two\n"+
			"running cluster-mode nodes, then tells every node of the cluster the new owner.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	list, err := parseSlotList(*slots)
	if err != nil || *from == "" || *to == "" || *batch < 1 {
		if err == nil {
			err = errors.New("--from, --to and --slots are required")
		}
		fmt.Fprintln(stderr, "cellserver migrate:", err)
		return 2
	}
	m := &migration{pass: *pass, batch: *batch, timeoutMs: *timeout, out: stdout}
	if err := m.run(*from, *to, list); err != nil {
		fmt.Fprintln(stderr, "cellserver migrate:", err)
		return 1
	}
	return 0
}

// parseSlotList reads "5,10-20".
func parseSlotList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(strings.TrimSpace(part), "-")
		lo, err1 := strconv.Atoi(a)
		hi := lo
		var err2 error
		if isRange {
			hi, err2 = strconv.Atoi(b)
		}
		if err1 != nil || err2 != nil || lo < 0 || hi > 16383 || hi < lo {
			return nil, fmt.Errorf("--slots %q: want slots 0..16383 as 5,10-20", s)
		}
		for i := lo; i <= hi; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}

type migration struct {
	pass      string
	batch     int
	timeoutMs int
	out       io.Writer
	moved     int
}

func (m *migration) run(fromAddr, toAddr string, slots []int) error {
	src, err := m.dial(fromAddr)
	if err != nil {
		return err
	}
	defer src.close()
	dst, err := m.dial(toAddr)
	if err != nil {
		return err
	}
	defer dst.close()
	srcID, err := src.str("CLUSTER", "MYID")
	if err != nil {
		return fmt.Errorf("%s: %v", fromAddr, err)
	}
	dstID, err := dst.str("CLUSTER", "MYID")
	if err != nil {
		return fmt.Errorf("%s: %v", toAddr, err)
	}
	others, err := otherNodes(src, srcID, dstID)
	if err != nil {
		return err
	}
	start := time.Now()
	var untold []string
	for _, s := range slots {
		slot := strconv.Itoa(s)
		if err := dst.ok("CLUSTER", "SETSLOT", slot, "IMPORTING", srcID); err != nil {
			if !strings.Contains(err.Error(), "already the owner") {
				return fmt.Errorf("slot %d: target: %v", s, err)
			}
			// A run cut short after the target took the slot: only the
			// telling is left to do.
		} else if err := m.moveSlot(src, dst, toAddr, s, dstID); err != nil {
			return err
		}
		if err := src.ok("CLUSTER", "SETSLOT", slot, "NODE", dstID); err != nil {
			return fmt.Errorf("slot %d: source: %v", s, err)
		}
		for _, addr := range others {
			c, err := m.dial(addr)
			if err == nil {
				err = c.ok("CLUSTER", "SETSLOT", slot, "NODE", dstID)
				c.close()
			}
			if err != nil {
				// It will send clients to the source, which sends them on;
				// the new topology file sets it right at its next start.
				untold = append(untold, fmt.Sprintf("slot %d: %s: %v", s, addr, err))
			}
		}
	}
	fmt.Fprintf(m.out, "moved %d slots and %d keys from %s to %s in %v\n", len(slots), m.moved, fromAddr, toAddr, time.Since(start).Round(time.Millisecond))
	nodes, err := dst.str("CLUSTER", "NODES")
	if err == nil {
		fmt.Fprintf(m.out, "new topology (install it as every node's --cluster-config-file):\n%s", stripMyself(nodes))
	}
	if len(untold) > 0 {
		return fmt.Errorf("the slots moved, but these nodes were not told:\n  %s", strings.Join(untold, "\n  "))
	}
	return nil
}

// otherNodes lists host:port of every node but the two, from the source's
// CLUSTER NODES.
func otherNodes(src *respConn, ids ...string) ([]string, error) {
	text, err := src.str("CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	var out []string
next:
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		for _, id := range ids {
			if f[0] == id {
				continue next
			}
		}
		addr, _, _ := strings.Cut(f[1], "@")
		out = append(out, addr)
	}
	return out, nil
}

// stripMyself removes the source-specific "myself," flag so the text fits
// every node.
func stripMyself(nodes string) string {
	return strings.ReplaceAll(nodes, "myself,", "")
}

// moveKeys moves a batch of keys of one slot with MIGRATE on the source:
// atomic per batch, and keys that expired meanwhile are skipped there.
func (m *migration) moveKeys(src *respConn, dstAddr string, keys []string) error {
	host, port, err := net.SplitHostPort(dstAddr)
	if err != nil {
		return err
	}
	args := []string{"MIGRATE", host, port, "", "0", strconv.Itoa(m.timeoutMs), "REPLACE"}
	if m.pass != "" {
		args = append(args, "AUTH", m.pass)
	}
	args = append(args, "KEYS")
	args = append(args, keys...)
	if err := src.ok(args...); err != nil {
		return err
	}
	m.moved += len(keys)
	return nil
}

func (m *migration) dial(addr string) (*respConn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	c := &respConn{nc: nc, r: bufio.NewReader(nc), w: bufio.NewWriter(nc)}
	if m.pass != "" {
		if err := c.ok("AUTH", m.pass); err != nil {
			c.close()
			return nil, fmt.Errorf("%s: AUTH: %v", addr, err)
		}
	}
	return c, nil
}

// respConn is the least RESP2 client the tool needs: one command at a time.
// Replies: string (simple or bulk), int64, []any, nil; an error reply is a
// Go error.
type respConn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

func (c *respConn) close() { c.nc.Close() }

func (c *respConn) do(args ...string) (any, error) {
	c.nc.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n%s\r\n", len(a), a)
	}
	if err := c.w.Flush(); err != nil {
		return nil, err
	}
	return c.read()
}

func (c *respConn) ok(args ...string) error {
	_, err := c.do(args...)
	return err
}

func (c *respConn) str(args ...string) (string, error) {
	v, err := c.do(args...)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: unexpected reply %v", args[0], v)
	}
	return s, nil
}

// replyError is an error reply of the server.
type replyError string

func (e replyError) Error() string { return string(e) }

func (c *respConn) read() (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty reply line")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, replyError(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 {
			return nil, fmt.Errorf("bad bulk length %q", body)
		}
		if n == -1 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 {
			return nil, fmt.Errorf("bad array length %q", body)
		}
		if n == -1 {
			return nil, nil
		}
		out := make([]any, 0, min(n, 1024))
		for range n {
			v, err := c.read()
			if err != nil {
				var re replyError
				if !errors.As(err, &re) {
					return nil, err
				}
				v = re
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected reply %q", line)
}

// moveSlot opens slot s on both nodes (IMPORTING was sent already), moves
// its keys, and gives it to the target on the target.
func (m *migration) moveSlot(src, dst *respConn, toAddr string, s int, dstID string) error {
	slot := strconv.Itoa(s)
	if err := src.ok("CLUSTER", "SETSLOT", slot, "MIGRATING", dstID); err != nil {
		return fmt.Errorf("slot %d: source: %v", s, err)
	}
	for {
		keys, err := src.do("CLUSTER", "GETKEYSINSLOT", slot, strconv.Itoa(m.batch))
		if err != nil {
			return fmt.Errorf("slot %d: %v", s, err)
		}
		list, _ := keys.([]any)
		if len(list) == 0 {
			break
		}
		names := make([]string, 0, len(list))
		for _, k := range list {
			key, _ := k.(string)
			names = append(names, key)
		}
		if err := m.moveKeys(src, toAddr, names); err != nil {
			return fmt.Errorf("slot %d: MIGRATE: %v", s, err)
		}
	}
	if err := dst.ok("CLUSTER", "SETSLOT", slot, "NODE", dstID); err != nil {
		return fmt.Errorf("slot %d: target: %v", s, err)
	}
	return nil
}
